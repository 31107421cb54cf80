package lend

import (
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func TestVCenterPlacement(t *testing.T) {
	a := &infrav1.VCenterAllowed{
		Templates: []string{"/DC0/vm/templates"}, ContentLibraries: []string{"images"}, Folders: []string{"/DC0/vm/tenant-a/"},
		ResourcePools: []string{"/DC0/host/C0/Resources/tenant-a"}, Datastores: []string{"/DC0/datastore/ds1"},
		Networks: []string{"/DC0/network/tenant-a"}, StoragePolicies: []string{"gold"},
	}
	lent := VCenterPaths{Template: "/DC0/vm/templates/win2022", Folder: "/DC0/vm/tenant-a", Pool: "/DC0/host/C0/Resources/tenant-a/dev",
		Networks: []string{"/DC0/network/tenant-a"}}
	for name, tc := range map[string]struct {
		change func(*VCenterPaths)
		field  string
	}{
		"lent":                       {func(*VCenterPaths) {}, ""},
		"library item":               {func(p *VCenterPaths) { p.Template, p.Library = "", "images" }, ""},
		"datastore and policy":       {func(p *VCenterPaths) { p.Datastore, p.StoragePolicy = "/DC0/datastore/ds1", "gold" }, ""},
		"another tenant's VM":        {func(p *VCenterPaths) { p.Template = "/DC0/vm/tenant-b/db01" }, "spec.template"},
		"prefix is no folder":        {func(p *VCenterPaths) { p.Template = "/DC0/vm/templates-b/win" }, "spec.template"},
		"no path from vCenter":       {func(p *VCenterPaths) { p.Template = "" }, "spec.template"},
		"another library":            {func(p *VCenterPaths) { p.Template, p.Library = "", "private" }, "spec.contentLibrary"},
		"the datacenter's VM folder": {func(p *VCenterPaths) { p.Folder = "/DC0/vm" }, "spec.placement.folder"},
		"another pool":               {func(p *VCenterPaths) { p.Pool = "/DC0/host/C0/Resources" }, "spec.placement.resourcePool"},
		"another datastore":          {func(p *VCenterPaths) { p.Datastore = "/DC0/datastore/ds2" }, "spec.placement.datastore"},
		"another network":            {func(p *VCenterPaths) { p.Networks = []string{"/DC0/network/mgmt"} }, "spec.network"},
		"another policy":             {func(p *VCenterPaths) { p.StoragePolicy = "platinum" }, "spec.storagePolicy"},
	} {
		t.Run(name, func(t *testing.T) {
			p := lent
			tc.change(&p)
			checkRefusals(t, VCenterPlacement("vcenter", a, p), tc.field)
		})
	}
}

func TestVCenterNamed(t *testing.T) {
	a := &infrav1.VCenterAllowed{Templates: []string{"/DC0/vm/templates"}, Folders: []string{"/DC0/vm/tenant-a"}, StoragePolicies: []string{"gold"}}
	for name, tc := range map[string]struct {
		p     VCenterPaths
		field string
	}{
		"names vCenter resolves later": {VCenterPaths{Template: "win2022", Folder: "tenant-b", Pool: "Resources", Networks: []string{"VM Network"}}, ""},
		"nothing named":                {VCenterPaths{}, ""},
		"lent paths":                   {VCenterPaths{Template: "/DC0/vm/templates/win2022", Folder: "/DC0/vm/tenant-a/x", StoragePolicy: "gold"}, ""},
		"another tenant's VM, by path": {VCenterPaths{Template: "/DC0/vm/tenant-b/db01"}, "spec.template"},
		"a pool by path":               {VCenterPaths{Template: "win", Pool: "/DC0/host/C0/Resources"}, "spec.placement.resourcePool"},
		"a network by path":            {VCenterPaths{Template: "win", Networks: []string{"VM Network", "/DC0/network/mgmt"}}, "spec.network"},
		"a library, named":             {VCenterPaths{Template: "win", Library: "private"}, "spec.contentLibrary"},
		"a storage policy, named":      {VCenterPaths{Template: "win", StoragePolicy: "platinum"}, "spec.storagePolicy"},
		"a datastore by path":          {VCenterPaths{Datastore: "/DC0/datastore/ds2"}, "spec.placement.datastore"},
		"a datastore vCenter resolves": {VCenterPaths{Datastore: "ds2"}, ""},
	} {
		t.Run(name, func(t *testing.T) { checkRefusals(t, VCenterNamed("vcenter", a, tc.p), tc.field) })
	}
}
