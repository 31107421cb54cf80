package hyperv

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// TestGPUInput: a partition keeps the bounds set and Hyper-V's MMIO space unless the spec sets one;
// assigned GPUs get the MMIO space of Microsoft's DDA guide unless the spec sets one; no gpu, no input.
func TestGPUInput(t *testing.T) {
	g := NewWithT(t)
	g.Expect(gpuInput(nil)).To(BeNil())
	g.Expect(gpuInput(&infrav1.HyperVGPU{Mode: infrav1.GPUPartition, Partition: &infrav1.HyperVGPUPartition{
		Compute: &infrav1.HyperVGPUResource{Min: 1, Optimal: 2, Max: 3}}})).To(Equal(&wire.GPUInput{Mode: "Partition", Count: 1,
		Partition: &infrav1.HyperVGPUPartition{Compute: &infrav1.HyperVGPUResource{Min: 1, Max: 3, Optimal: 2}}}))
	g.Expect(gpuInput(&infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 2})).To(Equal(&wire.GPUInput{Mode: "Assign", Count: 2,
		LowMMIOBytes: 3 << 30, HighMMIOBytes: 33280 << 20}))
	g.Expect(gpuInput(&infrav1.HyperVGPU{Mode: infrav1.GPUAssign, LocationPath: "P", LowMMIOSpaceMiB: 512, HighMMIOSpaceMiB: 65536})).To(Equal(
		&wire.GPUInput{Mode: "Assign", Count: 1, LocationPath: "P", LowMMIOBytes: 512 << 20, HighMMIOBytes: 65536 << 20}))
}

// TestHasFreeGPU: a partition needs a free partition, assigned GPUs enough free devices or the one
// named; a host not probed (no status) has none; a machine without gpu fits any host.
func TestHasFreeGPU(t *testing.T) {
	st := &infrav1.HyperVHostGPUStatus{FreePartitions: 1, AssignableDevices: []string{"PCIROOT(0)#PCI(0100)"}}
	for _, tc := range []struct {
		name string
		st   *infrav1.HyperVHostGPUStatus
		gpu  *infrav1.HyperVGPU
		want bool
	}{
		{"no gpu", nil, nil, true},
		{"partition", st, &infrav1.HyperVGPU{Mode: infrav1.GPUPartition}, true},
		{"partition, none free", &infrav1.HyperVHostGPUStatus{AssignableDevices: st.AssignableDevices}, &infrav1.HyperVGPU{Mode: infrav1.GPUPartition}, false},
		{"not probed", nil, &infrav1.HyperVGPU{Mode: infrav1.GPUPartition}, false},
		{"one device", st, &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 1}, true},
		{"two devices", st, &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 2}, false},
		{"the named device", st, &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, LocationPath: "pciroot(0)#pci(0100)"}, true},
		{"another device", st, &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, LocationPath: "PCIROOT(0)#PCI(0200)"}, false},
	} {
		if got := hasFreeGPU(tc.st, tc.gpu); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzHostGPUs feeds arbitrary runner output through what capwin makes of host.ps1's answer: the
// GPU status it writes must always fit the HyperVCluster's schema (free partitions not negative; at
// most 64 location paths, each trimmed, non-empty and at most 512 characters, sorted and unique),
// and be nil exactly when the host has nothing free.
func FuzzHostGPUs(f *testing.F) {
	line := func(doc string) []byte {
		return []byte(wire.ResultLine("n", []byte(doc)) + "\r\n")
	}
	f.Add(line(`{"ok":true,"result":{"name":"HV1","freeMemoryMiB":1024,"switches":["external"],"gpuPartitions":4,"gpuPartitionsInUse":1,` +
		`"assignableDevices":["PCIROOT(0)#PCI(0300)#PCI(0000)","PCIROOT(0)#PCI(0100)"]}}`))
	f.Add(line(`{"ok":true,"result":{"gpuPartitions":1,"gpuPartitionsInUse":3,"assignableDevices":[" ","a","a",""]}}`))
	f.Add(line(`{"ok":true,"result":{"gpuPartitions":-5,"assignableDevices":null}}`))
	f.Add(line(`{"ok":true,"result":{"gpuPartitions":9223372036854775807,"gpuPartitionsInUse":-9223372036854775808}}`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, stdout []byte) {
		o, found, err := parseOutcome(stdout, "n")
		if err != nil || !found || !o.OK {
			return
		}
		var info wire.HostInfo
		if json.Unmarshal(o.Result, &info) != nil {
			return
		}
		st := GPUStatus(info)
		if st == nil {
			return
		}
		if st.FreePartitions < 0 || len(st.AssignableDevices) > maxAssignable || (st.FreePartitions == 0 && len(st.AssignableDevices) == 0) {
			t.Fatalf("status %+v from %+v", st, info)
		}
		if !slices.IsSorted(st.AssignableDevices) || len(slices.Compact(slices.Clone(st.AssignableDevices))) != len(st.AssignableDevices) {
			t.Fatalf("paths not sorted and unique: %q", st.AssignableDevices)
		}
		for _, p := range st.AssignableDevices {
			if p == "" || len(p) > maxLocationPath || strings.TrimSpace(p) != p {
				t.Fatalf("path %q from %q", p, info.AssignableDevices)
			}
		}
	})
}
