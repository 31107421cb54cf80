package v1beta1

// NoGPUAvailableReason (VMProvisioned) says no host the machine may use has a free GPU of the kind
// its spec.gpu asks for; capwin keeps looking as GPUs are freed or added.
const NoGPUAvailableReason = "NoGPUAvailable"

// VCenterPCIDevice is one PCI device the VM gets through vSphere DirectPath I/O: either any host
// device with a vendor and device id (dynamic DirectPath I/O, vSphere 7.0 and later), or an NVIDIA
// GRID vGPU of a profile. vSphere powers on a VM with such a device only with all of its memory
// reserved: capwin sets the clone's memory reservation locked to its memory size.
// +kubebuilder:validation:XValidation:rule="has(self.vendorId) == has(self.deviceId)",message="vendorId and deviceId go together"
// +kubebuilder:validation:XValidation:rule="has(self.vGPUProfile) != has(self.vendorId)",message="set either vendorId and deviceId (DirectPath I/O) or vGPUProfile (NVIDIA GRID vGPU)"
type VCenterPCIDevice struct {
	// vendorId is the PCI vendor id of the host device, e.g. 4318 (0x10DE, NVIDIA). vSphere picks a
	// free host device with this vendor and device id when the VM powers on, on a host that has one.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	VendorID *int32 `json:"vendorId,omitempty"`

	// deviceId is the PCI device id of the host device (with vendorId).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	DeviceID *int32 `json:"deviceId,omitempty"`

	// vGPUProfile is the NVIDIA GRID vGPU profile, e.g. grid_t4-4q: the host's NVIDIA vGPU
	// manager must offer it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	VGPUProfile string `json:"vGPUProfile,omitempty"`

	// customLabel is the label vSphere shows for a DirectPath I/O device (vendorId/deviceId only).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	CustomLabel string `json:"customLabel,omitempty"`
}

// HyperVGPUMode is how a Hyper-V VM gets a GPU.
// +kubebuilder:validation:Enum=Partition;Assign
type HyperVGPUMode string

// Hyper-V GPU modes.
const (
	// GPUPartition gives the VM a partition of a host GPU (GPU-P, Add-VMGpuPartitionAdapter):
	// Windows Server 2025 Datacenter hosts whose GPU driver supports partitioning.
	GPUPartition HyperVGPUMode = "Partition"
	// GPUAssign gives the VM a whole host GPU (Discrete Device Assignment, Add-VMAssignableDevice)
	// that an operator dismounted from the host beforehand.
	GPUAssign HyperVGPUMode = "Assign"
)

// HyperVGPU is the GPU of a Hyper-V VM. capwin places the VM only on a host with a free GPU of this
// kind (status.hosts[].gpu of the HyperVCluster) and checks again on the host when it creates the
// VM; deleting the VM gives the GPU back.
// +kubebuilder:validation:XValidation:rule="self.mode == 'Assign' || (!has(self.count) || self.count == 1)",message="a VM gets one GPU partition: count is for mode Assign"
// +kubebuilder:validation:XValidation:rule="self.mode == 'Assign' || !has(self.locationPath)",message="locationPath is for mode Assign"
// +kubebuilder:validation:XValidation:rule="!has(self.locationPath) || !has(self.count) || self.count == 1",message="locationPath names one device: count must be 1"
// +kubebuilder:validation:XValidation:rule="self.mode == 'Partition' || !has(self.partition)",message="partition is for mode Partition"
type HyperVGPU struct {
	// mode is Partition (a share of a GPU, GPU-P) or Assign (whole GPUs, Discrete Device
	// Assignment).
	// +required
	Mode HyperVGPUMode `json:"mode"`

	// count is the number of whole GPUs to assign (mode Assign); a VM gets one partition.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	Count int32 `json:"count,omitempty"`

	// locationPath names the one host device to assign (mode Assign), as Get-VMHostAssignableDevice
	// shows it, e.g. PCIROOT(0)#PCI(0300)#PCI(0000). Unset, capwin takes any free assignable device.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	LocationPath string `json:"locationPath,omitempty"`

	// partition bounds the partition's resources (mode Partition); unset, Hyper-V gives a full
	// partition of the host GPU's configured size.
	// +optional
	Partition *HyperVGPUPartition `json:"partition,omitempty"`

	// lowMMIOSpaceMiB is the VM's 32-bit memory-mapped I/O space (Set-VM -LowMemoryMappedIoSpace).
	// Unset: 3072 with mode Assign (the value Microsoft's DDA guide gives for one GPU), Hyper-V's
	// default with mode Partition. Ask the GPU's vendor what the card needs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	LowMMIOSpaceMiB int32 `json:"lowMMIOSpaceMiB,omitempty"`

	// highMMIOSpaceMiB is the VM's memory-mapped I/O space above 4 GiB (Set-VM
	// -HighMemoryMappedIoSpace). Unset: 33280 with mode Assign (the value of Microsoft's DDA guide),
	// Hyper-V's default with mode Partition.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	HighMMIOSpaceMiB int64 `json:"highMMIOSpaceMiB,omitempty"`
}

// HyperVGPUPartition bounds a GPU partition's resources, in the units Get-VMHostPartitionableGpu
// reports for the host's GPU (its Min/Max/OptimalPartition* values).
type HyperVGPUPartition struct {
	// vram bounds the partition's video memory.
	// +optional
	VRAM *HyperVGPUResource `json:"vram,omitempty"`
	// encode bounds the partition's video encode capacity.
	// +optional
	Encode *HyperVGPUResource `json:"encode,omitempty"`
	// decode bounds the partition's video decode capacity.
	// +optional
	Decode *HyperVGPUResource `json:"decode,omitempty"`
	// compute bounds the partition's compute capacity.
	// +optional
	Compute *HyperVGPUResource `json:"compute,omitempty"`
}

// HyperVGPUResource is one resource of a GPU partition: Add-VMGpuPartitionAdapter's
// -MinPartition*, -MaxPartition* and -OptimalPartition* values.
// +kubebuilder:validation:XValidation:rule="self.min <= self.optimal && self.optimal <= self.max",message="want min <= optimal <= max"
type HyperVGPUResource struct {
	// min is the least the partition gets.
	// +required
	// +kubebuilder:validation:Minimum=0
	Min int64 `json:"min"`
	// max is the most the partition gets.
	// +required
	// +kubebuilder:validation:Minimum=0
	Max int64 `json:"max"`
	// optimal is what the partition gets when the GPU has it to give.
	// +required
	// +kubebuilder:validation:Minimum=0
	Optimal int64 `json:"optimal"`
}

// HyperVHostGPUStatus is what a host has free for new GPU VMs, as last probed.
type HyperVHostGPUStatus struct {
	// freePartitions is the number of GPU partitions not given to a VM: the PartitionCount of
	// every partitionable GPU (Get-VMHostPartitionableGpu) less the VMs' partition adapters.
	// +optional
	// +kubebuilder:validation:Minimum=0
	FreePartitions int32 `json:"freePartitions,omitempty"`
	// assignableDevices are the location paths of the devices dismounted from the host and not
	// assigned to a VM (Get-VMHostAssignableDevice).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	AssignableDevices []string `json:"assignableDevices,omitempty"`
}
