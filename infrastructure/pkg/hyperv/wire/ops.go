package wire

// Placement names the folders of one host: VMs go to VMPath\<uid>, disks to DiskPath\<uid>.vhdx.
// Cluster, when set, is the failover cluster the host is a node of: a VM is then a role of it,
// named after the machine's UID.
type Placement struct {
	VMPath   string `json:"vmPath"`
	DiskPath string `json:"diskPath"`
	Cluster  string `json:"cluster,omitempty"`
}

// HostInfo is host.ps1's result.
type HostInfo struct {
	Name              string   `json:"name"`
	FreeMemoryMiB     int64    `json:"freeMemoryMiB"`
	LogicalProcessors int      `json:"logicalProcessors"`
	VMs               int      `json:"vms"`
	Switches          []string `json:"switches"`
	Build             int      `json:"build"`
	// GPUPartitions is the PartitionCount of every partitionable GPU, summed; GPUPartitionsInUse
	// the VMs' GPU partition adapters; AssignableDevices the location paths of the devices
	// dismounted from the host and not assigned to a VM. gpuStatus makes status of them.
	GPUPartitions      int      `json:"gpuPartitions"`
	GPUPartitionsInUse int      `json:"gpuPartitionsInUse"`
	AssignableDevices  []string `json:"assignableDevices"`
	// Cluster is the failover cluster the host is a node of, read only when Placement names one.
	Cluster string `json:"cluster,omitempty"`
}

// VMKey identifies a machine's VM: by id when known, else by UID (notes, disk name).
type VMKey struct {
	Placement
	ID  string `json:"id,omitempty"`
	UID string `json:"uid"`
}

// View is what capwin observes about a VM in one operation.
type View struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	State     string            `json:"state"`
	Notes     string            `json:"notes"`
	Heartbeat bool              `json:"heartbeat"`
	NICs      []NICView         `json:"nics"`
	DVDs      []string          `json:"dvds"`
	Disks     []DiskView        `json:"disks"`
	KVP       map[string]string `json:"kvp"`
	// SecureBoot is Get-VMFirmware's SecureBoot (On); TPM is Get-VMSecurity's TpmEnabled.
	SecureBoot bool `json:"secureBoot"`
	TPM        bool `json:"tpm"`
}

// DiskView is one hard disk drive of a VM: its file and where it is attached.
type DiskView struct {
	Path string `json:"path"`
	// Controller is the controller type, SCSI or IDE.
	Controller       string `json:"controller"`
	ControllerNumber int32  `json:"controllerNumber"`
	Location         int32  `json:"location"`
}

// NICView is one VM network adapter.
type NICView struct {
	MAC    string   `json:"mac"`
	Switch string   `json:"switch"`
	IPs    []string `json:"ips"`
}

// PeekInput is peek.ps1's input: the ids of the VMs the guest watch follows on one host.
type PeekInput struct {
	IDs []string `json:"ids"`
}

// Peeked is peek.ps1's result: the VMs of the input that exist.
type Peeked struct {
	VMs []Peek `json:"vms"`
}

// Peek is what changes on a VM while its machine waits for the guest.
type Peek struct {
	ID        string            `json:"id"`
	State     string            `json:"state"`
	Heartbeat bool              `json:"heartbeat"`
	IPs       []string          `json:"ips"`
	KVP       map[string]string `json:"kvp"`
}

// PeekOf is the part of a view that peek.ps1 reads.
func PeekOf(v *View) Peek {
	p := Peek{ID: v.ID, State: v.State, Heartbeat: v.Heartbeat, IPs: []string{}, KVP: v.KVP}
	for _, n := range v.NICs {
		p.IPs = append(p.IPs, n.IPs...)
	}
	return p
}

// Found is find.ps1's result.
type Found struct {
	Found bool  `json:"found"`
	VM    *View `json:"vm,omitempty"`
}

// CreateInput is create.ps1's input.
type CreateInput struct {
	VMKey
	// Owner is the object's namespace/name, written into the VM's notes beside its UID: after
	// clusterctl move the object has a new UID but the same namespace/name.
	Owner         string         `json:"owner"`
	Name          string         `json:"name"`
	ParentDisk    string         `json:"parentDisk"`
	DiskBytes     int64          `json:"diskBytes"`
	Processors    int32          `json:"processors"`
	MemoryBytes   int64          `json:"memoryBytes"`
	DynamicMemory *DynamicMemory `json:"dynamicMemory,omitempty"`
	// NestedVirtualization exposes the host's virtualization extensions to the guest.
	NestedVirtualization bool       `json:"nestedVirtualization,omitempty"`
	SecureBoot           SecureBoot `json:"secureBoot"`
	// VTPM gives the VM a local key protector and enables its TPM.
	VTPM bool `json:"vtpm,omitempty"`
	// GPU gives the VM a GPU partition or assigned GPUs (nil: none).
	GPU *GPUInput `json:"gpu,omitempty"`
	// Settings are the checkpoint and automatic start and stop settings.
	Settings VMSettings `json:"settings"`
	NICs     []NICInput `json:"nics"`
	// DataDisks are created in the VM's folder and attached in this order, before the config drive.
	DataDisks []DataDiskInput `json:"dataDisks"`
	// ConfigDrive is the NoCloud ISO, base64.
	ConfigDrive string `json:"configDrive,omitempty"`
	// ConfigDriveLocation is the config drive's location on SCSI controller 0: after the data disks.
	ConfigDriveLocation int32 `json:"configDriveLocation"`
	// AntiAffinityClass is the AntiAffinityClassNames entry of the VM's cluster role ("" = none);
	// EnforceAntiAffinity makes the create fail unless the cluster enforces it.
	AntiAffinityClass   string `json:"antiAffinityClass,omitempty"`
	EnforceAntiAffinity bool   `json:"enforceAntiAffinity,omitempty"`
}

// Located is locate.ps1's result: the node that owns a machine's cluster role, as the failover
// cluster names it.
type Located struct {
	Found bool   `json:"found"`
	Node  string `json:"node"`
	State string `json:"state"`
}

// DynamicMemory of a VM.
type DynamicMemory struct {
	MinimumBytes  int64 `json:"minimumBytes"`
	MaximumBytes  int64 `json:"maximumBytes"`
	BufferPercent int32 `json:"bufferPercent"`
}

// SecureBoot settings of a generation 2 VM.
type SecureBoot struct {
	Enabled  bool   `json:"enabled"`
	Template string `json:"template"`
}

// NICInput is one adapter to add: switch, static MAC (Hyper-V form, no separators), VLAN (0 = none).
type NICInput struct {
	Switch string `json:"switch"`
	MAC    string `json:"mac"`
	VLANID int32  `json:"vlanId"`
}

// DataDiskInput is one data disk: the VHDX <name>.vhdx of type Dynamic or Fixed, attached at
// location Location of SCSI controller 0.
type DataDiskInput struct {
	Name      string `json:"name"`
	SizeBytes int64  `json:"sizeBytes"`
	Type      string `json:"type"`
	Location  int32  `json:"location"`
}

// Power actions.
const (
	PowerStart    = "start"
	PowerOff      = "off"
	PowerShutdown = "shutdown"
)

// PowerInput is power.ps1's input.
type PowerInput struct {
	ID     string `json:"id"`
	Action string `json:"action"`
}

// JobRef is power.ps1's result and job.ps1's input: a host job id ("" = done at once).
type JobRef struct {
	Job string `json:"job"`
}

// JobState is job.ps1's result: running, succeeded, failed or unknown.
type JobState struct {
	State   string `json:"state"`
	Message string `json:"message"`
}

// GuestInput is guest.ps1's input: files to write and the launcher command line to start once.
type GuestInput struct {
	ID          string      `json:"id"`
	Username    string      `json:"username"`
	Password    string      `json:"password"`
	Directory   string      `json:"directory"`
	Files       []GuestFile `json:"files"`
	LaunchPath  string      `json:"launchPath"`
	CommandLine string      `json:"commandLine"`
}

// GuestFile is one file for the guest, base64.
type GuestFile struct {
	Path string `json:"path"`
	Data string `json:"data"`
}

// GuestStarted is guest.ps1's result.
type GuestStarted struct {
	PID int64 `json:"pid"`
}

// GuestLogsInput is guestlogs.ps1's input: the collector script (base64) for ScriptPath in
// Directory, the command line parts that run it, and the zip it leaves at Output (at most
// MaxBytes).
type GuestLogsInput struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Directory  string `json:"directory"`
	ScriptPath string `json:"scriptPath"`
	Script     string `json:"script"`
	PowerShell string `json:"powerShell"`
	Arguments  string `json:"arguments"`
	Output     string `json:"output"`
	// MaxBytes is the largest zip the host hands back; a larger one is refused on the host.
	MaxBytes int64 `json:"maxBytes"`
}

// GuestLogs is guestlogs.ps1's result: the collector's zip, base64.
type GuestLogs struct {
	Data string `json:"data"`
}

// StatusKVPValue is the KVP guest item the bootstrap script reports in.
const StatusKVPValue = "capwin.bootstrap.status"
