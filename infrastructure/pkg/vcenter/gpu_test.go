package vcenter

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// withGPUs gives a spec a dynamic DirectPath I/O device (NVIDIA T4: vendor 0x10DE, device 0x1EB8)
// and a vGPU.
func withGPUs(s *infrav1.VCenterMachineSpec) {
	s.PCIDevices = []infrav1.VCenterPCIDevice{
		{VendorID: ptr.To[int32](0x10de), DeviceID: ptr.To[int32](0x1eb8), CustomLabel: "t4"},
		{VGPUProfile: "grid_t4-4q"},
	}
}

// addedPCI are the passthrough devices a clone spec adds.
func addedPCI(cs types.VirtualMachineCloneSpec) []*types.VirtualPCIPassthrough {
	var out []*types.VirtualPCIPassthrough
	for _, c := range cs.Config.DeviceChange {
		if spec := c.GetVirtualDeviceConfigSpec(); spec.Operation == types.VirtualDeviceConfigSpecOperationAdd {
			if d, ok := spec.Device.(*types.VirtualPCIPassthrough); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// TestCloneSpecPCIDevices: the spec's PCI devices are added in order, a vendor/device id as a dynamic
// DirectPath I/O backing and a vGPU profile as NVIDIA's vmiop backing, with keys no other new
// device takes, and the memory reservation is locked to the memory size; without PCI devices
// neither is set.
func TestCloneSpecPCIDevices(t *testing.T) {
	g := NewWithT(t)
	place := scsiTemplate(0)
	place.Firmware = "efi"
	cs, err := cloneSpec(cloneInput{Spec: spec(func(s *infrav1.VCenterMachineSpec) {
		withGPUs(s)
		twoDisks(s)
		s.Firmware, s.VTPM = infrav1.FirmwareEFI, true
	}), UID: "u", Place: place})
	g.Expect(err).NotTo(HaveOccurred())
	devices := addedPCI(cs)
	g.Expect(devices).To(HaveLen(2))
	g.Expect(devices[0].Backing).To(Equal(&types.VirtualPCIPassthroughDynamicBackingInfo{
		AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{{VendorId: 0x10de, DeviceId: 0x1eb8}}, CustomLabel: "t4"}))
	g.Expect(devices[1].Backing).To(Equal(&types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: "grid_t4-4q"}))
	g.Expect([]int32{devices[0].Key, devices[1].Key}).To(Equal([]int32{-6, -7}), "after a NIC edit and removal, the disks -1, -2 and the vTPM -5")
	g.Expect(cs.Config.MemoryReservationLockedToMax).To(Equal(ptr.To(true)))

	cs, err = cloneSpec(cloneInput{Spec: spec(nil), UID: "u", Place: place})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addedPCI(cs)).To(BeEmpty())
	g.Expect(cs.Config.MemoryReservationLockedToMax).To(BeNil(), "no reservation without a passthrough device")
}

// TestNoCompatibleHostForPCIDevices: a clone that no host can run, of a machine with PCI devices,
// names spec.pciDevices and what a host needs; one without keeps the general words.
func TestNoCompatibleHostForPCIDevices(t *testing.T) {
	g := NewWithT(t)
	failure := types.LocalizedMethodFault{Fault: &types.NoCompatibleHost{}, LocalizedMessage: "No compatible host"}
	on := clone
	on.pci = true
	g.Expect(taskMessage(on, failure)).To(And(ContainSubstring("with its PCI devices (spec.pciDevices)"),
		ContainSubstring("full memory reservation"), ContainSubstring("docs/gpus.md, vCenter"), HaveSuffix("(vSphere fault NoCompatibleHost)")))
	g.Expect(taskMessage(clone, failure)).NotTo(ContainSubstring("pciDevices"))
}
