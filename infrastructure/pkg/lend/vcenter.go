package lend

import (
	"slices"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// VCenterPaths are the inventory paths of the objects a clone uses, as vCenter resolved them.
type VCenterPaths struct {
	// Template is the template's path; with Library set, the library item's name.
	Template, Library string
	Folder, Pool      string
	// Datastore is "" when the clone keeps the template's.
	Datastore string
	Networks  []string
	// StoragePolicy is the policy's name ("" for none).
	StoragePolicy string
}

// VCenterPlacement returns what of a clone the identity id does not lend (its spec.allowed): each
// object it uses must be listed, or lie below a listed folder or pool.
func VCenterPlacement(id string, a *infrav1.VCenterAllowed, p VCenterPaths) []*Refusal {
	return vcenterLent(id, a, p, func(string) bool { return true })
}

// VCenterNamed is VCenterPlacement at admission, for what a spec names before vCenter resolves
// it: it judges the inventory paths given whole (from "/"), the content library and the storage
// policy; a name vCenter resolves in the datacenter is judged once resolved, before the clone.
func VCenterNamed(id string, a *infrav1.VCenterAllowed, p VCenterPaths) []*Refusal {
	return vcenterLent(id, a, p, func(path string) bool { return strings.HasPrefix(path, "/") })
}

// vcenterLent judges the paths of p for which judged is true.
func vcenterLent(id string, a *infrav1.VCenterAllowed, p VCenterPaths, judged func(string) bool) []*Refusal {
	var out []*Refusal
	check := func(field, what, path string, entries []string, list string) {
		if judged(path) && !inventoryIn(path, entries) {
			out = append(out, vcenterNotLent(field, id, what+" "+path, list, entries))
		}
	}
	if p.Library != "" {
		if !slices.Contains(a.ContentLibraries, p.Library) {
			out = append(out, vcenterNotLent("spec.contentLibrary", id, "the content library "+p.Library, "contentLibraries", a.ContentLibraries))
		}
	} else {
		check("spec.template", "the template", p.Template, a.Templates, "templates")
	}
	check("spec.placement.folder", "the folder", p.Folder, a.Folders, "folders")
	check("spec.placement.resourcePool", "the resource pool", p.Pool, a.ResourcePools, "resourcePools")
	if p.Datastore != "" {
		check("spec.placement.datastore", "the datastore", p.Datastore, a.Datastores, "datastores")
	}
	for _, n := range p.Networks {
		check("spec.network", "the network", n, a.Networks, "networks")
	}
	if p.StoragePolicy != "" && !slices.Contains(a.StoragePolicies, p.StoragePolicy) {
		out = append(out, vcenterNotLent("spec.storagePolicy", id, "the storage policy "+p.StoragePolicy, "storagePolicies", a.StoragePolicies))
	}
	return out
}

func vcenterNotLent(field, id, what, list string, entries []string) *Refusal {
	return listRefusal(field, "VCenterClusterIdentity", id, what, list, entries)
}

// inventoryIn reports whether an inventory path is one of the entries or lies below one. An
// empty path (vCenter gave none) is in none.
func inventoryIn(path string, entries []string) bool {
	if path == "" {
		return false
	}
	for _, e := range entries {
		e = strings.TrimSuffix(e, "/")
		if e != "" && (path == e || strings.HasPrefix(path, e+"/")) {
			return true
		}
	}
	return false
}
