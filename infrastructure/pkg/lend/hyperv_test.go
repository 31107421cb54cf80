package lend

import (
	"testing"

	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

var allowedHosts = &infrav1.HyperVAllowed{
	ParentDisks:       []string{`C:\golden\`, `D:\images\win2025.vhdx`},
	ParentDiskSources: []string{"https://images.example.com/windows/", `\\fs01\golden\`},
	Paths:             []string{`E:\tenants\a`},
	Switches:          []string{"tenant-a"},
	VLANs:             []infrav1.VLANRange{{From: 100, To: 199}, {From: 7}},
}

func TestHyperVMachine(t *testing.T) {
	nic := func(name string, vlan int32) []infrav1.HyperVNetworkDevice {
		d := infrav1.HyperVNetworkDevice{NetworkName: name}
		if vlan > 0 {
			d.VLANID = ptr.To(vlan)
		}
		return []infrav1.HyperVNetworkDevice{d}
	}
	source := func(u string) *infrav1.HyperVParentDiskSource { return &infrav1.HyperVParentDiskSource{URL: u} }
	for name, tc := range map[string]struct {
		spec  infrav1.HyperVMachineSpec
		field string
	}{
		"golden parent":             {infrav1.HyperVMachineSpec{ParentDisk: `c:/GOLDEN/win2022.vhdx`}, ""},
		"listed file":               {infrav1.HyperVMachineSpec{ParentDisk: `D:\images\win2025.vhdx`}, ""},
		"another VM's disk":         {infrav1.HyperVMachineSpec{ParentDisk: `C:\ProgramData\capwin\disks\6c1f.vhdx`}, "spec.parentDisk"},
		"a neighbour of the file":   {infrav1.HyperVMachineSpec{ParentDisk: `D:\images\dc01.vhdx`}, "spec.parentDisk"},
		"prefix is no folder":       {infrav1.HyperVMachineSpec{ParentDisk: `C:\golden-other\x.vhdx`}, "spec.parentDisk"},
		"out of the folder":         {infrav1.HyperVMachineSpec{ParentDisk: `C:\golden\..\dc\x.vhdx`}, "spec.parentDisk"},
		"listed URL":                {infrav1.HyperVMachineSpec{ParentDiskSource: source("https://IMAGES.example.com/windows/2022/w.vhdx")}, ""},
		"listed share":              {infrav1.HyperVMachineSpec{ParentDiskSource: source(`\\FS01\golden\w.vhdx`)}, ""},
		"tenant's share (coercion)": {infrav1.HyperVMachineSpec{ParentDiskSource: source(`\\tenant-vm\s\x.vhdx`)}, "spec.parentDiskSource.url"},
		"other path on the server":  {infrav1.HyperVMachineSpec{ParentDiskSource: source("https://images.example.com/private/x.vhdx")}, "spec.parentDiskSource.url"},
		"escaped dot segments":      {infrav1.HyperVMachineSpec{ParentDiskSource: source("https://images.example.com/windows/%2e%2e/private/x.vhdx")}, "spec.parentDiskSource.url"},
		"other port":                {infrav1.HyperVMachineSpec{ParentDiskSource: source("https://images.example.com:8443/windows/x.vhdx")}, "spec.parentDiskSource.url"},
		"lent switch and VLAN":      {infrav1.HyperVMachineSpec{Network: nic("Tenant-A", 150)}, ""},
		"single VLAN":               {infrav1.HyperVMachineSpec{Network: nic("tenant-a", 7)}, ""},
		"another switch":            {infrav1.HyperVMachineSpec{Network: nic("mgmt", 0)}, "spec.network[0].networkName"},
		"wildcard switch":           {infrav1.HyperVMachineSpec{Network: nic("*", 0)}, "spec.network[0].networkName"},
		"another VLAN":              {infrav1.HyperVMachineSpec{Network: nic("", 200)}, "spec.network[0].vlanID"},
		"cluster's switch, no VLAN": {infrav1.HyperVMachineSpec{Network: nic("", 0)}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := HyperVMachine("hosts", allowedHosts, &tc.spec)
			checkRefusals(t, got, tc.field)
		})
	}
}

func TestHyperVCluster(t *testing.T) {
	for name, tc := range map[string]struct {
		spec  infrav1.HyperVClusterSpec
		field string
	}{
		"host defaults":       {infrav1.HyperVClusterSpec{VirtualSwitch: "tenant-a"}, ""},
		"below a path":        {infrav1.HyperVClusterSpec{VirtualSwitch: "tenant-a", VMPath: `E:\tenants\a\vms`, DiskPath: `e:\TENANTS\A`}, ""},
		"system folder":       {infrav1.HyperVClusterSpec{VirtualSwitch: "tenant-a", VMPath: `C:\Windows\System32`}, "spec.vmPath"},
		"another tenant's":    {infrav1.HyperVClusterSpec{VirtualSwitch: "tenant-a", DiskPath: `E:\tenants\b`}, "spec.diskPath"},
		"another switch":      {infrav1.HyperVClusterSpec{VirtualSwitch: "mgmt"}, "spec.virtualSwitch"},
		"domain's own switch": {infrav1.HyperVClusterSpec{VirtualSwitch: "tenant-a", FailureDomains: []infrav1.HyperVFailureDomain{{Name: "a", VirtualSwitch: "storage"}}}, "spec.failureDomains[0].virtualSwitch"},
		"failover storage": {infrav1.HyperVClusterSpec{VirtualSwitch: "tenant-a",
			FailoverCluster: &infrav1.HyperVFailoverCluster{Name: "c", StoragePath: `C:\ClusterStorage\Volume1`}}, "spec.failoverCluster.storagePath"},
	} {
		t.Run(name, func(t *testing.T) {
			checkRefusals(t, HyperVCluster("hosts", allowedHosts, &tc.spec), tc.field)
		})
	}
}

// checkRefusals fails unless there is none (field "") or exactly one, of field.
func checkRefusals(t *testing.T, got []*Refusal, field string) {
	t.Helper()
	switch {
	case field == "" && len(got) > 0:
		t.Fatalf("refused: %v", got[0])
	case field != "" && len(got) != 1:
		t.Fatalf("got %d refusals %v, want one of %s", len(got), got, field)
	case field != "" && got[0].Field != field:
		t.Fatalf("refused %s (%s), want %s", got[0].Field, got[0].Detail, field)
	}
}
