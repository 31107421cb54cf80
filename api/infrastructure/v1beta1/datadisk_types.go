package v1beta1

// DataDiskName names a data disk within its machine: its file name on Hyper-V, its label in status.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
type DataDiskName string

// VCenterDiskProvisioning is how a vSphere data disk's blocks are allocated.
// +kubebuilder:validation:Enum=Thin;Thick;EagerZeroedThick
type VCenterDiskProvisioning string

// vSphere disk provisioning modes.
const (
	// DiskThin allocates blocks when the guest first writes them.
	DiskThin VCenterDiskProvisioning = "Thin"
	// DiskThick reserves every block at create and zeroes each on first write (lazy zeroed).
	DiskThick VCenterDiskProvisioning = "Thick"
	// DiskEagerZeroedThick reserves and zeroes every block at create (slow to create; needed by
	// some clustering and fault-tolerance features).
	DiskEagerZeroedThick VCenterDiskProvisioning = "EagerZeroedThick"
)

// VCenterDataDisk is a disk created with the VM, on the VM's datastore and storage policy, and
// deleted with it. The i-th data disk takes the i-th free unit number of the template's first
// SCSI controller (unit 7 is the controller's own): with a one-disk template, data disk 0 is unit
// 1, which Windows reports as SCSI target 1, LUN 0 (status.dataDisks shows every disk's address).
type VCenterDataDisk struct {
	// name identifies the disk in status.dataDisks; unique within the machine.
	// +required
	Name DataDiskName `json:"name"`

	// sizeGiB is the disk's size.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=63488
	SizeGiB int32 `json:"sizeGiB"`

	// provisioning is Thin (default), Thick (lazy zeroed) or EagerZeroedThick.
	// +optional
	// +kubebuilder:default=Thin
	Provisioning VCenterDiskProvisioning `json:"provisioning,omitempty"`
}

// HyperVDiskType is the kind of VHDX a Hyper-V data disk is.
// +kubebuilder:validation:Enum=Dynamic;Fixed
type HyperVDiskType string

// Hyper-V data disk types.
const (
	// DiskDynamic grows the VHDX file as the guest writes.
	DiskDynamic HyperVDiskType = "Dynamic"
	// DiskFixed allocates the whole VHDX file at create.
	DiskFixed HyperVDiskType = "Fixed"
)

// HyperVDataDisk is a VHDX created in the VM's folder with the VM and deleted with it. The i-th
// data disk is attached at location i+1 of SCSI controller 0 (the OS disk is at 0, the config
// drive after the data disks), which Windows reports as SCSI target 0, LUN i+1.
type HyperVDataDisk struct {
	// name is the disk's file name (<name>.vhdx) and its name in status.dataDisks; unique within
	// the machine.
	// +required
	Name DataDiskName `json:"name"`

	// sizeGiB is the disk's size.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	SizeGiB int32 `json:"sizeGiB"`

	// type is Dynamic (default) or Fixed.
	// +optional
	// +kubebuilder:default=Dynamic
	Type HyperVDiskType `json:"type,omitempty"`
}

// DataDiskStatus is where the guest finds a data disk: the SCSI address a WindowsConfig's
// spec.disks[].location names.
type DataDiskStatus struct {
	// name of the disk in the machine's spec.dataDisks.
	// +required
	Name DataDiskName `json:"name"`

	// target is the disk's SCSI target id in the guest.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=254
	Target int32 `json:"target"`

	// lun is the disk's SCSI logical unit number in the guest.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=254
	LUN int32 `json:"lun"`
}
