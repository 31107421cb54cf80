package v1beta1

// Disk is a data disk the node prepares before containerd starts: found by its SCSI address,
// initialized, partitioned (one partition over the whole disk), formatted and mounted. A disk that
// is already prepared as asked is left alone; a disk that holds partitions or data that do not
// match is never erased: the bootstrap fails and says so. The infrastructure provider attaches the
// disk at the matching SCSI address (docs/bootstrap.md, "Data disks").
// +kubebuilder:validation:XValidation:rule="has(self.driveLetter) != has(self.mountPath)",message="set exactly one of driveLetter and mountPath"
type Disk struct {
	// location is the disk's SCSI address as Windows reports it.
	// +required
	Location DiskLocation `json:"location"`

	// partitionStyle is GPT (default) or MBR; MBR disks hold at most 2 TiB.
	// +optional
	// +kubebuilder:default=GPT
	PartitionStyle PartitionStyle `json:"partitionStyle,omitempty"`

	// fileSystem is NTFS (default) or ReFS.
	// +optional
	// +kubebuilder:default=NTFS
	FileSystem FileSystem `json:"fileSystem,omitempty"`

	// label is the volume label; it is also how a re-run recognizes the volume it formatted.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9 _.-]+$`
	Label string `json:"label,omitempty"`

	// allocationUnitSize is the cluster size in bytes (unset: the file system's default). ReFS
	// takes 4096 or 65536.
	// +optional
	// +kubebuilder:validation:Enum=4096;8192;16384;32768;65536
	AllocationUnitSize int32 `json:"allocationUnitSize,omitempty"`

	// driveLetter mounts the volume as a drive, D to Z (not C). D is often the CD-ROM drive.
	// +optional
	// +kubebuilder:validation:Pattern=`^[D-Zd-z]$`
	DriveLetter string `json:"driveLetter,omitempty"`

	// mountPath mounts the volume in a folder of the system drive, e.g. C:\data. The folder is
	// created when missing and must be empty.
	// +optional
	// +kubebuilder:validation:MinLength=4
	// +kubebuilder:validation:MaxLength=240
	// +kubebuilder:validation:Pattern=`^[Cc]:\\[^<>:"/|?*]+$`
	MountPath string `json:"mountPath,omitempty"`
}

// DiskLocation is a disk's SCSI address in the guest: Win32_DiskDrive's SCSITargetId and
// SCSILogicalUnit. vSphere (PVSCSI or LSI Logic SAS) shows a disk at unit number N as target N,
// LUN 0; Hyper-V (synthetic SCSI) shows a disk at controller location N as target 0, LUN N.
type DiskLocation struct {
	// target is the SCSI target id.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=254
	Target int32 `json:"target"`

	// lun is the SCSI logical unit number.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=254
	LUN int32 `json:"lun"`
}

// PartitionStyle is a disk's partition table.
// +kubebuilder:validation:Enum=GPT;MBR
type PartitionStyle string

// Partition styles.
const (
	PartitionStyleGPT PartitionStyle = "GPT"
	PartitionStyleMBR PartitionStyle = "MBR"
)

// FileSystem is the file system a data disk is formatted with.
// +kubebuilder:validation:Enum=NTFS;ReFS
type FileSystem string

// File systems.
const (
	FileSystemNTFS FileSystem = "NTFS"
	FileSystemReFS FileSystem = "ReFS"
)
