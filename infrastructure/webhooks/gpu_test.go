package webhooks

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestValidatePCIDevices: the rules of spec.pciDevices the CRD declares hold in Go too.
func TestValidatePCIDevices(t *testing.T) {
	cases := []specCase[infrav1.VCenterMachineSpec]{
		{"DirectPath I/O and vGPU", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](0x10de), DeviceID: ptr.To[int32](0x1eb8)}, {VGPUProfile: "grid_t4-4q"}}
		}, "", ""},
		{"vendor without device", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](0x10de)}}
		}, "spec.pciDevices[0]", "vendorId and deviceId go together"},
		{"ids and profile", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](1), DeviceID: ptr.To[int32](2), VGPUProfile: "p"}}
		}, "spec.pciDevices[0]", "set either vendorId and deviceId"},
		{"nothing", func(s *infrav1.VCenterMachineSpec) { s.PCIDevices = []infrav1.VCenterPCIDevice{{}} },
			"spec.pciDevices[0]", "set either vendorId and deviceId"},
		{"id out of range", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](0x10000), DeviceID: ptr.To[int32](1)}}
		}, "spec.pciDevices[0].vendorId", "0 to 65535"},
		{"nine devices", func(s *infrav1.VCenterMachineSpec) {
			for range 9 {
				s.PCIDevices = append(s.PCIDevices, infrav1.VCenterPCIDevice{VGPUProfile: "p"})
			}
		}, "spec.pciDevices", "must have at most 8 items"},
	}
	runSpecCases(t, cases, validMachineSpec, func(s infrav1.VCenterMachineSpec) field.ErrorList {
		DefaultMachineSpec(&s)
		return ValidateMachineSpec(s, field.NewPath("spec"))
	})
}

// TestValidateHyperVGPU: the rules of spec.gpu the CRD declares hold in Go too; count defaults to 1.
func TestValidateHyperVGPU(t *testing.T) {
	dynamic := &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 8192}
	cases := []specCase[infrav1.HyperVMachineSpec]{
		{"partition", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition} }, "", ""},
		{"partition with dynamic memory", func(s *infrav1.HyperVMachineSpec) {
			s.GPU, s.DynamicMemory = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition}, dynamic
		}, "", ""},
		{"two assigned", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 2} }, "", ""},
		{"two partitions", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, Count: 2} },
			"spec.gpu.count", "one GPU partition"},
		{"partition at a location", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, LocationPath: "P"}
		}, "spec.gpu.locationPath", "for mode Assign"},
		{"location for two", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 2, LocationPath: "P"}
		}, "spec.gpu.locationPath", "names one device"},
		{"assigned with bounds", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Partition: &infrav1.HyperVGPUPartition{}}
		}, "spec.gpu.partition", "for mode Partition"},
		{"assigned with dynamic memory", func(s *infrav1.HyperVMachineSpec) {
			s.GPU, s.DynamicMemory = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign}, dynamic
		}, "spec.gpu.mode", "needs static memory"},
		{"nine assigned", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 9} },
			"spec.gpu.count", "between 1 and 8"},
		{"unknown mode", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: "Share"} },
			"spec.gpu.mode", `supported values: "Partition", "Assign"`},
	}
	runSpecCases(t, cases, validHyperVMachineSpec, func(s infrav1.HyperVMachineSpec) field.ErrorList {
		DefaultHyperVMachineSpec(&s)
		if s.GPU != nil && s.GPU.Count < 1 {
			t.Errorf("count %d not defaulted", s.GPU.Count)
		}
		return ValidateHyperVMachineSpec(s, field.NewPath("spec"))
	})
}
