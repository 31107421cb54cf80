package hypervsim

import (
	"context"
	"strings"
	"testing"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// TestDataDisksThroughWinRM: create makes each data disk in the VM's folder and attaches it at
// its location, the config drive after them; a run that stopped before the complete line is
// finished without a second attachment; a file of another size is refused, never replaced.
func TestDataDisksThroughWinRM(t *testing.T) {
	h, _, conn := simHost(t, false)
	ctx := context.Background()
	in := createInput("u3", []byte("iso"))
	in.DataDisks = []wire.DataDiskInput{{Name: "data", SizeBytes: 1 << 30, Type: "Dynamic", Location: 1},
		{Name: "logs", SizeBytes: 2 << 30, Type: "Fixed", Location: 2}}
	in.ConfigDriveLocation = 3
	var v wire.View
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		t.Fatal(err)
	}
	want := []wire.DiskView{{Path: `C:\capwin\disks\u3.vhdx`, Controller: "SCSI"},
		{Path: `C:\capwin\vms\u3\data.vhdx`, Controller: "SCSI", Location: 1},
		{Path: `C:\capwin\vms\u3\logs.vhdx`, Controller: "SCSI", Location: 2}}
	checkDisks(t, h, v, want)
	// Interrupted after the disks were attached: the next run finishes the VM as it is.
	_ = h.Guest(v.ID, func(vm *VM) { vm.Notes = strings.TrimSuffix(vm.Notes, "\ncapwin-complete:u3") })
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		t.Fatal(err)
	}
	checkDisks(t, h, v, want)
	if err := conn.Run(ctx, wire.OpRemove, wire.VMKey{Placement: folders, ID: v.ID, UID: "u3"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(h.VMs()) != 0 || strings.Join(h.Files(), ",") != strings.ToLower(parent) {
		t.Fatalf("left behind: %d VMs, files %v", len(h.VMs()), h.Files())
	}
	h.AddVHD(`C:\capwin\vms\u3\logs.vhdx`, VHD{Type: "Fixed", SizeBytes: 1 << 30})
	err := conn.Run(ctx, wire.OpCreate, in, nil)
	if hyperv.KindOf(err) != wire.KindFailed || !strings.Contains(err.Error(), "never replaces a disk") {
		t.Fatalf("create over a disk of another size: %v", err)
	}
	if d, _ := h.VHD(`C:\capwin\vms\u3\logs.vhdx`); d.SizeBytes != 1<<30 {
		t.Fatalf("the foreign disk was changed: %+v", d)
	}
}

func checkDisks(t *testing.T, h *Host, v wire.View, want []wire.DiskView) {
	t.Helper()
	if len(v.Disks) != len(want) {
		t.Fatalf("disks %+v, want %+v", v.Disks, want)
	}
	for i := range want {
		if !strings.EqualFold(v.Disks[i].Path, want[i].Path) || v.Disks[i].Location != want[i].Location || v.Disks[i].Controller != "SCSI" {
			t.Fatalf("disk %d: %+v, want %+v", i, v.Disks[i], want[i])
		}
	}
	if d, _ := h.VHD(want[1].Path); d != (VHD{Type: "Dynamic", SizeBytes: 1 << 30}) {
		t.Errorf("data disk: %+v", d)
	}
	if d, _ := h.VHD(want[2].Path); d != (VHD{Type: "Fixed", SizeBytes: 2 << 30}) {
		t.Errorf("logs disk: %+v", d)
	}
	if vm := h.VMs()[0]; vm.DVDLocation != 3 || len(vm.DVDs) != 1 {
		t.Errorf("config drive %v at %d, want one at 3", vm.DVDs, vm.DVDLocation)
	}
}
