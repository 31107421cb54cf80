package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// maxPCIDevices is the CRD's limit on spec.pciDevices; maxAssignedGPUs its limit on spec.gpu.count.
const (
	maxPCIDevices   = 8
	maxAssignedGPUs = 8
)

// validatePCIDevices checks what the CRD schema also declares (an object stored before the field's
// rules, or a template's spec checked in Go, gets the same answer): each device is either a vendor
// and device id or a vGPU profile.
func validatePCIDevices(devices []infrav1.VCenterPCIDevice, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(devices) > maxPCIDevices {
		errs = append(errs, field.TooMany(path, len(devices), maxPCIDevices))
	}
	for i, d := range devices {
		p := path.Index(i)
		ids := d.VendorID != nil && d.DeviceID != nil
		switch {
		case (d.VendorID == nil) != (d.DeviceID == nil):
			errs = append(errs, field.Invalid(p, d, "vendorId and deviceId go together"))
		case ids == (d.VGPUProfile != ""):
			errs = append(errs, field.Invalid(p, d, "set either vendorId and deviceId (DirectPath I/O) or vGPUProfile (NVIDIA GRID vGPU)"))
		}
		for _, id := range []struct {
			name string
			v    *int32
		}{{"vendorId", d.VendorID}, {"deviceId", d.DeviceID}} {
			if id.v != nil && (*id.v < 0 || *id.v > 0xffff) {
				errs = append(errs, field.Invalid(p.Child(id.name), *id.v, "must be a PCI id, 0 to 65535"))
			}
		}
	}
	return errs
}

// validateHyperVGPU checks the rules of spec.gpu the CRD also declares, for the same reason.
func validateHyperVGPU(spec infrav1.HyperVMachineSpec, path *field.Path) field.ErrorList {
	g := spec.GPU
	if g == nil {
		return nil
	}
	var errs field.ErrorList
	switch g.Mode {
	case infrav1.GPUPartition:
		if g.Count > 1 {
			errs = append(errs, field.Invalid(path.Child("count"), g.Count, "a VM gets one GPU partition: count is for mode Assign"))
		}
		if g.LocationPath != "" {
			errs = append(errs, field.Invalid(path.Child("locationPath"), g.LocationPath, "locationPath is for mode Assign"))
		}
	case infrav1.GPUAssign:
		if g.Count < 0 || g.Count > maxAssignedGPUs {
			errs = append(errs, field.Invalid(path.Child("count"), g.Count, "must be between 1 and 8"))
		}
		if g.LocationPath != "" && g.Count > 1 {
			errs = append(errs, field.Invalid(path.Child("locationPath"), g.LocationPath, "locationPath names one device: count must be 1"))
		}
		if g.Partition != nil {
			errs = append(errs, field.Invalid(path.Child("partition"), "", "partition is for mode Partition"))
		}
		if spec.DynamicMemory != nil {
			errs = append(errs, field.Invalid(path.Child("mode"), g.Mode,
				"gpu mode Assign needs static memory: Discrete Device Assignment does not work with dynamic memory; remove dynamicMemory"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("mode"), g.Mode, []infrav1.HyperVGPUMode{infrav1.GPUPartition, infrav1.GPUAssign}))
	}
	return errs
}
