package hypervsim

import (
	"context"
	"slices"
	"strings"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// hostInfo runs host.ps1 through WinRM.
func hostInfo(t *testing.T, conn *hyperv.Conn) wire.HostInfo {
	t.Helper()
	var info wire.HostInfo
	if err := conn.Run(context.Background(), wire.OpHost, folders, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// TestGPUPartitionThroughWinRM: a host with one GPU partition gives it to the first VM that asks
// (with the partition's bounds, write-combining and the MMIO space asked for) and reports it in use;
// a second VM is refused as NoGPU before anything of it is made; removing the first VM frees the
// partition for the second.
func TestGPUPartitionThroughWinRM(t *testing.T) {
	h, _, conn := simHost(t, false)
	ctx := context.Background()
	h.SetGPUs(1)
	if info := hostInfo(t, conn); info.GPUPartitions != 1 || info.GPUPartitionsInUse != 0 {
		t.Fatalf("host info %+v, want 1 partition, none in use", info)
	}
	in := createInput("g1", []byte("iso"))
	bounds := &infrav1.HyperVGPUPartition{VRAM: &infrav1.HyperVGPUResource{Min: 1, Max: 3, Optimal: 2}}
	in.GPU = &wire.GPUInput{Mode: "Partition", Count: 1, Partition: bounds, HighMMIOBytes: 32 << 30}
	var v wire.View
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		t.Fatal(err)
	}
	gpu := h.VMs()[0].GPU
	if !gpu.Partition || *gpu.Bounds.VRAM != *bounds.VRAM || !gpu.GuestControlledCacheTypes || gpu.HighMMIOBytes != 32<<30 || gpu.LowMMIOBytes != 0 {
		t.Fatalf("VM GPU %+v", gpu)
	}
	if info := hostInfo(t, conn); info.GPUPartitionsInUse != 1 {
		t.Fatalf("host info %+v, want the partition in use", info)
	}
	second := createInput("g2", []byte("iso"))
	second.GPU = &wire.GPUInput{Mode: "Partition", Count: 1}
	err := conn.Run(ctx, wire.OpCreate, second, nil)
	if hyperv.KindOf(err) != wire.KindNoGPU || !strings.Contains(err.Error(), "no free GPU partition (1 of 1 in use)") {
		t.Fatalf("second create: %v", err)
	}
	if len(h.VMs()) != 1 || slices.ContainsFunc(h.Files(), func(f string) bool { return strings.Contains(f, "g2") }) {
		t.Fatalf("the refused create left %d VMs, files %v", len(h.VMs()), h.Files())
	}
	if err := conn.Run(ctx, wire.OpRemove, wire.VMKey{Placement: folders, ID: v.ID, UID: "g1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Run(ctx, wire.OpCreate, second, nil); err != nil {
		t.Fatalf("create after the partition was freed: %v", err)
	}
}

// TestGPUAssignThroughWinRM: two of three dismounted devices go to a VM that asks for two, with the
// MMIO space given, once also when its create is run again after an interruption; the third device
// is what the host reports free; a VM naming a device another VM holds is refused; removing the VM
// gives its devices back.
func TestGPUAssignThroughWinRM(t *testing.T) {
	h, _, conn := simHost(t, false)
	ctx := context.Background()
	devices := []string{"PCIROOT(0)#PCI(0100)", "PCIROOT(0)#PCI(0200)", "PCIROOT(0)#PCI(0300)"}
	h.SetGPUs(0, devices...)
	in := createInput("a1", []byte("iso"))
	in.GPU = &wire.GPUInput{Mode: "Assign", Count: 2, LowMMIOBytes: 3 << 30, HighMMIOBytes: 33280 << 20}
	h.CutCreates(1)
	if err := conn.Run(ctx, wire.OpCreate, in, nil); err == nil {
		t.Fatal("the cut create succeeded")
	}
	var v wire.View
	for range 2 {
		if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
			t.Fatal(err)
		}
	}
	gpu := h.VMs()[0].GPU
	if !slices.Equal(gpu.Devices, devices[:2]) || gpu.LowMMIOBytes != 3<<30 || gpu.HighMMIOBytes != 33280<<20 || !gpu.GuestControlledCacheTypes {
		t.Fatalf("VM GPU %+v, want devices %v", gpu, devices[:2])
	}
	if info := hostInfo(t, conn); !slices.Equal(info.AssignableDevices, devices[2:]) {
		t.Fatalf("free devices %v, want %v", info.AssignableDevices, devices[2:])
	}
	held := createInput("a2", []byte("iso"))
	held.GPU = &wire.GPUInput{Mode: "Assign", Count: 1, LocationPath: devices[0]}
	if err := conn.Run(ctx, wire.OpCreate, held, nil); hyperv.KindOf(err) != wire.KindNoGPU {
		t.Fatalf("create with a held device: %v", err)
	}
	if err := conn.Run(ctx, wire.OpRemove, wire.VMKey{Placement: folders, ID: v.ID, UID: "a1"}, nil); err != nil {
		t.Fatal(err)
	}
	if info := hostInfo(t, conn); !slices.Equal(info.AssignableDevices, devices) {
		t.Fatalf("free devices after remove %v, want %v", info.AssignableDevices, devices)
	}
}
