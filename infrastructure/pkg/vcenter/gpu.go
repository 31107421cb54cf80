package vcenter

import (
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// gpuConfig adds the spec's PCI devices to the clone: a DirectPath I/O device that vSphere picks by
// vendor and device id when the VM powers on (dynamic DirectPath I/O), or an NVIDIA GRID vGPU of a
// profile. vSphere powers on a VM with a passthrough device only when all of its memory is
// reserved, so the clone's reservation is locked to its memory size (it follows memoryMiB).
func gpuConfig(cfg *types.VirtualMachineConfigSpec, spec *infrav1.VCenterMachineSpec) {
	if len(spec.PCIDevices) == 0 {
		return
	}
	for _, d := range spec.PCIDevices {
		// A new device: any negative key unique in the spec (the data disks take -1 to -n).
		key := -1 - int32(len(cfg.DeviceChange)) //nolint:gosec // at most 8 PCI devices, 14 disks and 10 NICs
		cfg.DeviceChange = append(cfg.DeviceChange, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd,
			Device:    &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{Key: key, Backing: pciBacking(d)}},
		})
	}
	cfg.MemoryReservationLockedToMax = ptr.To(true)
}

// pciBacking is the backing of one passthrough device: NVIDIA's vmiop backing for a vGPU profile,
// else a dynamic backing that allows any host device with the vendor and device id.
func pciBacking(d infrav1.VCenterPCIDevice) types.BaseVirtualDeviceBackingInfo {
	if d.VGPUProfile != "" {
		return &types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: d.VGPUProfile}
	}
	return &types.VirtualPCIPassthroughDynamicBackingInfo{
		AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{{VendorId: ptr.Deref(d.VendorID, 0), DeviceId: ptr.Deref(d.DeviceID, 0)}},
		CustomLabel:   d.CustomLabel,
	}
}
