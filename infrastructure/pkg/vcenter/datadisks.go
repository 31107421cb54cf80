package vcenter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// keyDataDisks records where the clone put each of spec.dataDisks, in spec order:
// "data=scsi0:1,logs=scsi0:2" (bus 0, units 1 and 2). The clone task that creates the disks writes
// it, so it exists exactly when they do; it is read with the VM's other properties (no extra
// call), needs neither the template nor the placement cache, and is not a guestinfo key (the
// guest can neither read nor change it). A vSphere VirtualDisk has no label of its own to carry
// the name (deviceInfo.label is vCenter's "Hard disk 2").
const keyDataDisks = "capwin.datadisks"

// scsiUnits is the number of unit numbers of a SCSI controller; unit 7 is the controller's own.
const (
	scsiUnits         = 16
	scsiControllerOwn = 7
)

// dataDiskChanges adds spec.dataDisks on the first SCSI controller of the template's devices, at
// its free units in order, and returns the keyDataDisks value recording them. The disks live in
// the VM's folder on its datastore, under the VM's storage policy (profileID), and are deleted
// with the VM.
func dataDiskChanges(spec *infrav1.VCenterMachineSpec, devices object.VirtualDeviceList, profileID string) ([]types.BaseVirtualDeviceConfigSpec, string, error) {
	if len(spec.DataDisks) == 0 {
		return nil, "", nil
	}
	ctrl := firstSCSIController(devices)
	if ctrl == nil {
		return nil, "", hypervisor.Errorf(infrav1.InvalidSpecReason,
			"spec.dataDisks: the template has no SCSI controller to attach them to: add one (VMware Paravirtual) to the template")
	}
	free := freeUnits(devices, ctrl)
	if len(free) < len(spec.DataDisks) {
		return nil, "", hypervisor.Errorf(infrav1.InvalidSpecReason,
			"spec.dataDisks: %d disks, but the template's SCSI controller %d has %d free units: remove disks from the spec or from the template",
			len(spec.DataDisks), ctrl.BusNumber, len(free))
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	var placed []string
	for i, d := range spec.DataDisks {
		disk := &types.VirtualDisk{
			VirtualDevice: types.VirtualDevice{
				Key:           -1 - int32(i), // a new device: any negative key unique in the spec
				ControllerKey: ctrl.Key,
				UnitNumber:    &free[i],
				Backing:       diskBacking(d.Provisioning),
			},
			CapacityInKB: int64(d.SizeGiB) * 1024 * 1024,
		}
		change := &types.VirtualDeviceConfigSpec{
			Operation:     types.VirtualDeviceConfigSpecOperationAdd,
			FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate,
			Device:        disk,
		}
		if profileID != "" {
			change.Profile = []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: profileID}}
		}
		changes = append(changes, change)
		placed = append(placed, fmt.Sprintf("%s=scsi%d:%d", d.Name, ctrl.BusNumber, free[i]))
	}
	return changes, strings.Join(placed, ","), nil
}

// diskBacking is a new disk file in the VM's folder (no file name: vCenter names it beside the
// VM's own files, on the VM's datastore), allocated as provisioning says (Thin when unset).
func diskBacking(provisioning infrav1.VCenterDiskProvisioning) *types.VirtualDiskFlatVer2BackingInfo {
	return &types.VirtualDiskFlatVer2BackingInfo{
		DiskMode:        string(types.VirtualDiskModePersistent),
		ThinProvisioned: types.NewBool(provisioning == infrav1.DiskThin || provisioning == ""),
		EagerlyScrub:    types.NewBool(provisioning == infrav1.DiskEagerZeroedThick),
	}
}

// firstSCSIController is the SCSI controller with the lowest bus number (nil: none).
func firstSCSIController(devices object.VirtualDeviceList) *types.VirtualSCSIController {
	var first *types.VirtualSCSIController
	for _, d := range devices {
		if c, ok := d.(types.BaseVirtualSCSIController); ok {
			if sc := c.GetVirtualSCSIController(); first == nil || sc.BusNumber < first.BusNumber {
				first = sc
			}
		}
	}
	return first
}

// freeUnits are the unit numbers of ctrl no device uses, lowest first.
func freeUnits(devices object.VirtualDeviceList, ctrl *types.VirtualSCSIController) []int32 {
	used := []int32{scsiControllerOwn}
	for _, d := range devices {
		if v := d.GetVirtualDevice(); v.ControllerKey == ctrl.Key && v.UnitNumber != nil {
			used = append(used, *v.UnitNumber)
		}
	}
	var free []int32
	for u := range int32(scsiUnits) {
		if !slices.Contains(used, u) {
			free = append(free, u)
		}
	}
	return free
}

// observeDataDisks reads the keyDataDisks value (placed) against the VM's devices: the data disks still
// attached where the clone put them, with the SCSI address Windows sees each at (unit N of the
// controller is target N, LUN 0), in spec order, and the device keys of those disks.
func observeDataDisks(placed string, devices object.VirtualDeviceList) ([]infrav1.DataDiskStatus, []int32) {
	var out []infrav1.DataDiskStatus
	var keys []int32
	for _, entry := range strings.Split(placed, ",") {
		name, where, _ := strings.Cut(entry, "=")
		var bus, unit int32
		if _, err := fmt.Sscanf(where, "scsi%d:%d", &bus, &unit); err != nil || name == "" {
			continue
		}
		if disk := diskAt(devices, bus, unit); disk != nil {
			out = append(out, infrav1.DataDiskStatus{Name: infrav1.DataDiskName(name), Target: unit, LUN: 0})
			keys = append(keys, disk.Key)
		}
	}
	return out, keys
}

// diskAt is the disk at unit of the SCSI controller on bus (nil: none).
func diskAt(devices object.VirtualDeviceList, bus, unit int32) *types.VirtualDisk {
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		if disk.UnitNumber == nil || *disk.UnitNumber != unit {
			continue
		}
		if c, ok := devices.FindByKey(disk.ControllerKey).(types.BaseVirtualSCSIController); ok && c.GetVirtualSCSIController().BusNumber == bus {
			return disk
		}
	}
	return nil
}
