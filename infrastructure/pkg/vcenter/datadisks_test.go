package vcenter

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// scsiTemplate is template() with a PVSCSI controller on bus 0 holding disks at units.
func scsiTemplate(units ...int32) *resolved {
	place := template()
	ctrl := &types.ParaVirtualSCSIController{VirtualSCSIController: types.VirtualSCSIController{
		VirtualController: types.VirtualController{VirtualDevice: types.VirtualDevice{Key: 1000}}, ScsiCtlrUnitNumber: 7}}
	devices := object.VirtualDeviceList{ctrl}
	for i, u := range units {
		devices = append(devices, &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2000 + int32(i), ControllerKey: 1000, UnitNumber: &u},
			CapacityInKB: 10 * 1024 * 1024})
	}
	place.Devices = append(devices, place.Devices.SelectByType((*types.VirtualEthernetCard)(nil))...)
	return place
}

func withDataDisks(disks ...infrav1.VCenterDataDisk) func(*infrav1.VCenterMachineSpec) {
	return func(s *infrav1.VCenterMachineSpec) { s.DataDisks = disks }
}

var twoDisks = withDataDisks(
	infrav1.VCenterDataDisk{Name: "data", SizeGiB: 20, Provisioning: infrav1.DiskThin},
	infrav1.VCenterDataDisk{Name: "logs", SizeGiB: 5, Provisioning: infrav1.DiskEagerZeroedThick},
)

// addedDisks are the disks a clone spec adds: unit, KiB, thin, eagerly scrubbed.
func addedDisks(g Gomega, cs types.VirtualMachineCloneSpec) [][4]any {
	var out [][4]any
	for _, c := range cs.Config.DeviceChange {
		spec := c.GetVirtualDeviceConfigSpec()
		disk, ok := spec.Device.(*types.VirtualDisk)
		if !ok {
			continue
		}
		g.Expect(spec.Operation).To(Equal(types.VirtualDeviceConfigSpecOperationAdd))
		g.Expect(spec.FileOperation).To(Equal(types.VirtualDeviceConfigSpecFileOperationCreate))
		g.Expect(disk.ControllerKey).To(BeEquivalentTo(1000))
		b := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
		g.Expect(b.FileName).To(BeEmpty(), "vCenter places the file beside the VM's")
		out = append(out, [4]any{*disk.UnitNumber, disk.CapacityInKB, *b.ThinProvisioned, *b.EagerlyScrub})
	}
	return out
}

func TestCloneSpecDataDisks(t *testing.T) {
	g := NewWithT(t)
	place := scsiTemplate(0)
	place.ProfileID = "profile-1"
	cs, err := cloneSpec(cloneInput{Spec: spec(twoDisks), UID: "u", Place: place, UserData: []byte("x"), Metadata: []byte("m")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addedDisks(g, cs)).To(Equal([][4]any{
		{int32(1), int64(20 * 1024 * 1024), true, false},
		{int32(2), int64(5 * 1024 * 1024), false, true},
	}))
	g.Expect(cs.Config.ExtraConfig).To(ContainElement(&types.OptionValue{Key: keyDataDisks, Value: "data=scsi0:1,logs=scsi0:2"}))
	for _, c := range cs.Config.DeviceChange {
		if spec := c.GetVirtualDeviceConfigSpec(); spec.FileOperation != "" {
			g.Expect(spec.Profile).To(ConsistOf(&types.VirtualMachineDefinedProfileSpec{ProfileId: "profile-1"}), "the VM's storage policy")
		}
	}
	g.Expect(cs.PowerOn).To(BeTrue(), "data disks need no step after the clone")

	// Thick is lazily zeroed; units taken by the template's disks (1, 3) and the controller (7)
	// are skipped.
	thick := withDataDisks(infrav1.VCenterDataDisk{Name: "a", SizeGiB: 1, Provisioning: infrav1.DiskThick},
		infrav1.VCenterDataDisk{Name: "b", SizeGiB: 1}, infrav1.VCenterDataDisk{Name: "c", SizeGiB: 1}, infrav1.VCenterDataDisk{Name: "d", SizeGiB: 1})
	cs, err = cloneSpec(cloneInput{Spec: spec(thick), UID: "u", Place: scsiTemplate(0, 1, 3, 6)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addedDisks(g, cs)).To(Equal([][4]any{
		{int32(2), int64(1024 * 1024), false, false},
		{int32(4), int64(1024 * 1024), true, false}, // unset provisioning is Thin
		{int32(5), int64(1024 * 1024), true, false},
		{int32(8), int64(1024 * 1024), true, false},
	}))

	plain, err := cloneSpec(cloneInput{Spec: spec(nil), UID: "u", Place: scsiTemplate(0)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addedDisks(g, plain)).To(BeEmpty())
	for _, o := range plain.Config.ExtraConfig {
		g.Expect(o.GetOptionValue().Key).NotTo(Equal(keyDataDisks))
	}
}

func TestCloneSpecDataDisksRefused(t *testing.T) {
	full := []int32{0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14}
	for name, tc := range map[string]struct {
		place *resolved
		want  string
	}{
		"no SCSI controller": {template(), "spec.dataDisks: the template has no SCSI controller"},
		"no free units": {scsiTemplate(full...),
			"spec.dataDisks: 2 disks, but the template's SCSI controller 0 has 1 free units: remove disks from the spec or from the template"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := cloneSpec(cloneInput{Spec: spec(twoDisks), UID: "u", Place: tc.place})
			var e *hypervisor.Error
			g.Expect(errors.As(err, &e)).To(BeTrue(), "%v", err)
			g.Expect(e.Reason).To(Equal(infrav1.InvalidSpecReason))
			g.Expect(e.Message).To(ContainSubstring(tc.want))
		})
	}
}

// TestObserveDataDisks: keyDataDisks names the disks in spec order; a disk no longer where the clone
// put it is not reported, and an unreadable entry is skipped.
func TestObserveDataDisks(t *testing.T) {
	g := NewWithT(t)
	devices := scsiTemplate(0, 2, 1).Devices
	got, keys := observeDataDisks("logs=scsi0:2,gone=scsi0:5,data=scsi0:1,junk,=scsi0:3,x=ide0:1", devices)
	g.Expect(got).To(Equal([]infrav1.DataDiskStatus{{Name: "logs", Target: 2}, {Name: "data", Target: 1}}))
	g.Expect(keys).To(Equal([]int32{2001, 2002}))
	got, keys = observeDataDisks("", devices)
	g.Expect(got).To(BeEmpty())
	g.Expect(keys).To(BeEmpty())
}

// TestObserveKeepsDataDisksFromGrowth: a data disk listed before the template's disk is reported
// and left out of the devices diskGiB grows, so the system disk is grown, never a data disk.
func TestObserveKeepsDataDisksFromGrowth(t *testing.T) {
	g := NewWithT(t)
	devices := scsiTemplate(1, 0).Devices // the data disk (unit 1, key 2000) comes first
	oc := types.ObjectContent{PropSet: []types.DynamicProperty{
		{Name: "config.hardware.device", Val: types.ArrayOfVirtualDevice{VirtualDevice: devices}},
		{Name: extraConfigPath(keyDataDisks), Val: types.OptionValue{Key: keyDataDisks, Value: "data=scsi0:1"}},
	}}
	vm, rest, _ := observe(vmRef("vm-1"), oc)
	g.Expect(vm.DataDisks).To(Equal([]infrav1.DataDiskStatus{{Name: "data", Target: 1}}))
	g.Expect(rest).To(HaveLen(len(devices) - 1))
	grow, err := diskChange(spec(func(s *infrav1.VCenterMachineSpec) { s.DiskGiB = 40 }), rest)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(grow.GetVirtualDeviceConfigSpec().Device.GetVirtualDevice().Key).To(BeEquivalentTo(2001), "the system disk")
}
