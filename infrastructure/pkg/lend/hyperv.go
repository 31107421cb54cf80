package lend

import (
	"fmt"
	"net/url"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// HyperVCluster returns what of a HyperVCluster the identity id does not lend: its VM and disk
// folders and failover storage path must be capwin's default folders or lie in allowed.paths, its switches (the cluster's and its failure domains') be in allowed.switches.
func HyperVCluster(id string, a *infrav1.HyperVAllowed, spec *infrav1.HyperVClusterSpec) []*Refusal {
	var out []*Refusal
	folders := []struct{ field, path string }{{"spec.vmPath", spec.VMPath}, {"spec.diskPath", spec.DiskPath}}
	if fc := spec.FailoverCluster; fc != nil {
		folders = append(folders, struct{ field, path string }{"spec.failoverCluster.storagePath", fc.StoragePath})
	}
	// capwin's own folders, the defaults, are lent with the login: VMs and disks there are named
	// by their machines' UIDs.
	lent := append([]string{infrav1.DefaultHyperVVMPath, infrav1.DefaultHyperVDiskPath}, a.Paths...)
	for _, f := range folders {
		if f.path != "" && !windowsPathIn(f.path, lent) {
			out = append(out, notLent(f.field, id, "the folder "+f.path, "paths", a.Paths))
		}
	}
	if !nameIn(spec.VirtualSwitch, a.Switches) {
		out = append(out, notLent("spec.virtualSwitch", id, "the switch "+spec.VirtualSwitch, "switches", a.Switches))
	}
	for i, fd := range spec.FailureDomains {
		if fd.VirtualSwitch != "" && !nameIn(fd.VirtualSwitch, a.Switches) {
			out = append(out, notLent(fmt.Sprintf("spec.failureDomains[%d].virtualSwitch", i), id, "the switch "+fd.VirtualSwitch, "switches", a.Switches))
		}
	}
	return out
}

// HyperVMachine returns what of a HyperVMachine the identity id does not lend: its parent disk
// must lie in allowed.parentDisks, its parent disk source start with one of
// allowed.parentDiskSources, each NIC's switch (the cluster's when it names none) be in
// allowed.switches and its VLAN in allowed.vlans.
func HyperVMachine(id string, a *infrav1.HyperVAllowed, spec *infrav1.HyperVMachineSpec) []*Refusal {
	var out []*Refusal
	if spec.ParentDisk != "" && !windowsPathIn(spec.ParentDisk, a.ParentDisks) {
		out = append(out, notLent("spec.parentDisk", id, "the parent disk "+spec.ParentDisk, "parentDisks", a.ParentDisks))
	}
	if s := spec.ParentDiskSource; s != nil && !sourceIn(s.URL, a.ParentDiskSources) {
		out = append(out, notLent("spec.parentDiskSource.url", id, "copies from "+s.URL, "parentDiskSources", a.ParentDiskSources))
	}
	for i, n := range spec.Network {
		if n.NetworkName != "" && !nameIn(n.NetworkName, a.Switches) {
			out = append(out, notLent(fmt.Sprintf("spec.network[%d].networkName", i), id, "the switch "+n.NetworkName, "switches", a.Switches))
		}
		if n.VLANID != nil && !vlanIn(*n.VLANID, a.VLANs) {
			out = append(out, refuse(fmt.Sprintf("spec.network[%d].vlanID", i), "HyperVClusterIdentity %s does not lend VLAN %d (its spec.allowed.vlans): ask the platform team", id, *n.VLANID))
		}
	}
	return out
}

func notLent(field, id, what, list string, entries []string) *Refusal {
	return listRefusal(field, "HyperVClusterIdentity", id, what, list, entries)
}

// listRefusal says that the identity (of kind) does not lend what, not being in its list.
func listRefusal(field, kind, id, what, list string, entries []string) *Refusal {
	lent := "none"
	if len(entries) > 0 {
		lent = strings.Join(entries, ", ")
	}
	return refuse(field, "%s %s does not lend %s (its spec.allowed.%s: %s): ask the platform team", kind, id, what, list, lent)
}

// windowsPathIn reports whether a Windows path is one of the entries or lies below one, without
// regard to case or the kind of slash. A path with a . or .. segment is in none.
func windowsPathIn(p string, entries []string) bool {
	norm := func(s string) string {
		return strings.TrimSuffix(strings.ToLower(strings.ReplaceAll(s, "/", `\`)), `\`)
	}
	p = norm(p)
	for _, segment := range strings.Split(p, `\`) {
		if segment == "." || segment == ".." {
			return false
		}
	}
	for _, e := range entries {
		e = norm(e)
		if e != "" && (p == e || strings.HasPrefix(p, e+`\`)) {
			return true
		}
	}
	return false
}

// sourceIn reports whether a parent disk source is below one of the entries: a share folder (by
// windowsPathIn) or an https URL prefix with the same host and port and a path below the
// entry's. A URL whose path has . or .. segments, or escapes them, is in none.
func sourceIn(src string, entries []string) bool {
	if strings.HasPrefix(src, `\\`) {
		var shares []string
		for _, e := range entries {
			if strings.HasPrefix(e, `\\`) {
				shares = append(shares, e)
			}
		}
		return windowsPathIn(src, shares)
	}
	u, err := url.Parse(src)
	if err != nil || u.Scheme != "https" || u.User != nil || strings.Contains(strings.ToLower(u.RawPath+u.Path), "%2e") {
		return false
	}
	for _, segment := range strings.Split(u.Path, "/") {
		if segment == "." || segment == ".." {
			return false
		}
	}
	for _, e := range entries {
		p, err := url.Parse(e)
		if err != nil || p.Scheme != "https" || !strings.EqualFold(p.Host, u.Host) {
			continue
		}
		prefix := strings.TrimSuffix(p.Path, "/")
		if u.Path == prefix || strings.HasPrefix(u.Path, prefix+"/") {
			return true
		}
	}
	return false
}

// nameIn reports whether a name is one of the entries (exactly: Hyper-V compares switch names
// without regard to case, so does this).
func nameIn(name string, entries []string) bool {
	for _, e := range entries {
		if strings.EqualFold(e, name) {
			return true
		}
	}
	return false
}

func vlanIn(id int32, ranges []infrav1.VLANRange) bool {
	for _, r := range ranges {
		to := r.To
		if to == 0 {
			to = r.From
		}
		if id >= r.From && id <= to {
			return true
		}
	}
	return false
}
