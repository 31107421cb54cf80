package vcenter

import (
	"cmp"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// securityConfig sets the clone's firmware, Secure Boot and vTPM. The firmware is never converted:
// a disk installed for BIOS does not boot with EFI (nor the other way round), so a spec whose
// firmware is not the template's is refused. A vTPM is added unless the template has one; vSphere
// then encrypts the VM's configuration files with the default key provider.
func securityConfig(cfg *types.VirtualMachineConfigSpec, spec *infrav1.VCenterMachineSpec, place *resolved) error {
	if spec.Firmware != "" {
		// vSphere reads a VM without a firmware setting as BIOS.
		if have := cmp.Or(place.Firmware, string(infrav1.FirmwareBIOS)); have != string(spec.Firmware) {
			return hypervisor.Errorf(infrav1.InvalidSpecReason,
				"spec.firmware: template %q boots with %s firmware, not %s; capwin does not convert a template's firmware (its disk would not boot): set firmware to %s or use a template with %s firmware",
				spec.Template, have, spec.Firmware, have, spec.Firmware)
		}
		cfg.Firmware = string(spec.Firmware)
	}
	if spec.SecureBoot != nil {
		cfg.BootOptions = &types.VirtualMachineBootOptions{EfiSecureBootEnabled: spec.SecureBoot}
	}
	if spec.VTPM && len(place.Devices.SelectByType((*types.VirtualTPM)(nil))) == 0 {
		// A new device: any negative key unique in the spec (the data disks take -1 to -n).
		key := -1 - int32(len(cfg.DeviceChange)) //nolint:gosec // at most 14 disks and 10 NICs
		cfg.DeviceChange = append(cfg.DeviceChange, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd,
			Device:    &types.VirtualTPM{VirtualDevice: types.VirtualDevice{Key: key}},
		})
	}
	return nil
}

// observeSecurity reads the VM's firmware (vSphere's default, BIOS, when unset), Secure Boot and
// vTPM from the properties of one observation.
func observeSecurity(oc types.ObjectContent, devices object.VirtualDeviceList) infrav1.SecurityStatus {
	out := infrav1.SecurityStatus{TPM: len(devices.SelectByType((*types.VirtualTPM)(nil))) > 0}
	for _, p := range oc.PropSet {
		switch p.Name {
		case "config.firmware":
			fw, _ := p.Val.(string)
			out.Firmware = infrav1.Firmware(cmp.Or(fw, string(infrav1.FirmwareBIOS)))
		case "config.bootOptions.efiSecureBootEnabled":
			out.SecureBoot, _ = p.Val.(bool)
		}
	}
	return out
}
