package hypervsim

import (
	"sort"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// GPU is what a simulated VM was given: a partition (Add-VMGpuPartitionAdapter, with its bounds),
// assigned devices (Add-VMAssignableDevice) and the Set-VM settings that go with them.
type GPU struct {
	Partition bool
	Bounds    *infrav1.HyperVGPUPartition
	Devices   []string
	// GuestControlledCacheTypes, LowMMIOBytes and HighMMIOBytes are Set-VM's values (0: Hyper-V's).
	GuestControlledCacheTypes   bool
	LowMMIOBytes, HighMMIOBytes int64
}

// SetGPUs gives the host partitionable GPUs with this many partitions in all
// (Set-VMHostPartitionableGpu -PartitionCount) and devices dismounted for assignment at these
// location paths (Dismount-VMHostAssignableDevice). Devices VMs hold stay theirs.
func (h *Host) SetGPUs(partitions int, devices ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gpuPartitions = partitions
	for p, holder := range h.devices {
		if holder == "" {
			delete(h.devices, p)
		}
	}
	for _, p := range devices {
		if _, held := h.devices[p]; !held {
			h.devices[p] = ""
		}
	}
}

// partitionsInUse counts the VMs' partition adapters (Get-VM | Get-VMGpuPartitionAdapter); host.ps1
// asks the VMs only on a host with partitions.
func (h *Host) partitionsInUse() int {
	n := 0
	if h.gpuPartitions == 0 {
		return 0
	}
	for _, vm := range h.vms {
		if vm.GPU.Partition {
			n++
		}
	}
	return n
}

// assignable mirrors Get-CapwinAssignable: the free devices (Get-VMHostAssignableDevice), only the
// one locationPath names when it names one, by location path.
func (h *Host) assignable(g *wire.GPUInput) []string {
	var out []string
	for p, holder := range h.devices {
		if holder == "" && (g == nil || g.LocationPath == "" || strings.EqualFold(p, g.LocationPath)) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// testGPU mirrors create.ps1's Test-CapwinGpu: no free GPU of the kind asked for stops the create
// before anything is made; a VM an interrupted run left keeps what it has.
func (h *Host) testGPU(vm *VM, g *wire.GPUInput) error {
	if g.Mode == "Partition" {
		if vm != nil && vm.GPU.Partition {
			return nil
		}
		if used := h.partitionsInUse(); used >= h.gpuPartitions {
			return fail(wire.KindNoGPU, "host %s has no free GPU partition (%d of %d in use)", h.Name, used, h.gpuPartitions)
		}
		return nil
	}
	have := 0
	if vm != nil {
		have = len(vm.GPU.Devices)
	}
	if free := h.assignable(g); have+len(free) < int(g.Count) {
		return fail(wire.KindNoGPU, "host %s has %d free assignable devices, the VM needs %d", h.Name, len(free), int(g.Count)-have)
	}
	return nil
}

// addGPU mirrors Add-CapwinGpu: Set-VM's cache types and MMIO space, then a partition or the
// devices the VM lacks, once.
func (h *Host) addGPU(vm *VM, g *wire.GPUInput) {
	vm.GPU.GuestControlledCacheTypes = true
	if g.LowMMIOBytes > 0 {
		vm.GPU.LowMMIOBytes = g.LowMMIOBytes
	}
	if g.HighMMIOBytes > 0 {
		vm.GPU.HighMMIOBytes = g.HighMMIOBytes
	}
	if g.Mode == "Partition" {
		if !vm.GPU.Partition {
			vm.GPU.Partition, vm.GPU.Bounds = true, g.Partition
		}
		return
	}
	free := h.assignable(g)
	for need := int(g.Count) - len(vm.GPU.Devices); need > 0 && len(free) > 0; need-- {
		h.devices[free[0]] = vm.ID
		vm.GPU.Devices = append(vm.GPU.Devices, free[0])
		free = free[1:]
	}
}

// gpuGiven mirrors Test-CapwinGpuGiven.
func gpuGiven(vm *VM, g *wire.GPUInput) bool {
	if g.Mode == "Partition" {
		return vm.GPU.Partition
	}
	return len(vm.GPU.Devices) >= int(g.Count)
}

// releaseGPU mirrors remove.ps1: Remove-VMAssignableDevice gives the devices back to the host's
// assignable devices, Remove-VMGpuPartitionAdapter the partition to its GPU.
func (h *Host) releaseGPU(vm *VM) {
	for _, p := range vm.GPU.Devices {
		h.devices[p] = ""
	}
	vm.GPU = GPU{}
}
