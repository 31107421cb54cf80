package userdata

// Document is the one JSON data document the static PowerShell reads. Its field names are the
// contract with ps/bootstrap.ps1 (and with the simulated guest of the test harness): every value
// the node needs is here, nothing is baked into code.
type Document struct {
	Version int `json:"version"`
	// Mode is "cloudbase-init" (the script runs as a #ps1_sysnative part; a reboot is exit code
	// 1003) or "standalone" (run by the infrastructure provider; a reboot re-runs a saved copy
	// from a startup task).
	Mode string `json:"mode"`
	// MinimumBuild is the lowest Windows build the node may run (Windows Server 2022).
	MinimumBuild      int    `json:"minimumBuild"`
	NodeName          string `json:"nodeName,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion"`
	Paths             Paths  `json:"paths"`
	Status            Status `json:"status"`
	// NetworkSource says where the network step finds capwin's network document.
	NetworkSource NetworkSource `json:"networkSource"`
	// Features are Windows optional features to enable.
	Features   []string       `json:"features"`
	Proxy      *DocProxy      `json:"proxy,omitempty"`
	Time       *DocTime       `json:"time,omitempty"`
	Domain     *DocDomain     `json:"domain,omitempty"`
	Users      []User         `json:"users,omitempty"`
	AdminKeys  []string       `json:"adminKeys,omitempty"`
	Downloads  []DocDownload  `json:"downloads,omitempty"`
	Disks      []DocDisk      `json:"disks,omitempty"`
	Containerd DocContainerd  `json:"containerd"`
	Firewall   []FirewallRule `json:"firewall"`
	Defender   *Defender      `json:"defender,omitempty"`
	PrePull    *DocPrePull    `json:"prePull,omitempty"`
	Files      []DocFile      `json:"files,omitempty"`
	PreJoin    []DocFile      `json:"preJoin,omitempty"`
	PostJoin   []DocFile      `json:"postJoin,omitempty"`
	Kubelet    DocKubelet     `json:"kubelet"`
	Join       DocJoin        `json:"join"`
}

// Paths are the node's well-known locations.
type Paths struct {
	StateDir    string   `json:"stateDir"`
	LogFile     string   `json:"logFile"`
	Sentinel    string   `json:"sentinel"`
	Directories []string `json:"directories"`
	// Private directories hold secrets: only SYSTEM and Administrators may open them.
	Private []string `json:"private"`
}

// Status says where the node reports bootstrap progress for the infrastructure provider.
type Status struct {
	// GuestinfoKey is set through VMware Tools (rpctool) on vSphere.
	GuestinfoKey string `json:"guestinfoKey"`
	// KVPKey and KVPValue name the Hyper-V KVP guest item (registry) read by the host.
	KVPKey   string `json:"kvpKey"`
	KVPValue string `json:"kvpValue"`
	// MaxBytes bounds the status JSON (a KVP item holds 1024 bytes).
	MaxBytes int `json:"maxBytes"`
}

// NetworkSource is where the infrastructure provider puts capwin's network document for a
// cloudbase-init guest (routes, MTU, DNS search list): a guestinfo key read through VMware Tools
// (base64), or a file on the volume with the config drive's label (JSON). Neither present: the
// network step does nothing.
type NetworkSource struct {
	GuestinfoKey string `json:"guestinfoKey"`
	VolumeLabel  string `json:"volumeLabel"`
	File         string `json:"file"`
}

// DocProxy is the machine-wide proxy environment.
type DocProxy struct {
	HTTPProxy  string `json:"httpProxy,omitempty"`
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	NoProxy    string `json:"noProxy,omitempty"`
}

// DocTime configures the time zone (a Windows id) and the time service, in both formats.
type DocTime struct {
	Timezone   string   `json:"timezone,omitempty"`
	NTPServers []string `json:"ntpServers,omitempty"`
}

// DocDomain is the Active Directory join (Add-Computer), followed by a restart. The password is
// never logged; the document is kept only in the state directory (SYSTEM and Administrators)
// while the script waits for a restart.
type DocDomain struct {
	Name               string   `json:"name"`
	OrganizationalUnit string   `json:"organizationalUnit,omitempty"`
	DNSServers         []string `json:"dnsServers,omitempty"`
	Username           string   `json:"username"`
	Password           string   `json:"password"`
	// ReuseAccount: join with an existing computer account of the node's name created before
	// AccountNotBefore (RFC 3339, UTC: the Machine's creation) instead of stopping.
	ReuseAccount     bool   `json:"reuseAccount,omitempty"`
	AccountNotBefore string `json:"accountNotBefore,omitempty"`
	// Groups the node waits to be a member of, up to GroupWaitSeconds, after the join's restart.
	Groups           []string `json:"groups,omitempty"`
	GroupWaitSeconds int      `json:"groupWaitSeconds,omitempty"`
}

// GroupWait is how long a node waits for the bootstrap manager to put its computer account in
// the groups: the manager looks every 15 s, and a domain controller's replication within a site
// takes seconds; past it the node goes on without the groups (gMSA pods fail until they come).
const GroupWait = 15 * 60

// DocDownload is a file fetched and checked before use. Extract is the directory a .tar.gz
// archive is unpacked into ("" keeps the file as is).
type DocDownload struct {
	URL     string `json:"url"`
	SHA256  string `json:"sha256"`
	Path    string `json:"path"`
	Extract string `json:"extract,omitempty"`
	// Service is stopped before the archive's files replace its program (Windows cannot replace
	// a running program); the step that uses it starts it again.
	Service string `json:"service,omitempty"`
}

// DocDisk is a data disk of the disks step: the disk at SCSI target/lun is initialized only when
// RAW, and a volume that does not match (partition style, file system, label) is never touched.
type DocDisk struct {
	Target             int32  `json:"target"`
	LUN                int32  `json:"lun"`
	PartitionStyle     string `json:"partitionStyle"`
	FileSystem         string `json:"fileSystem"`
	Label              string `json:"label"`
	AllocationUnitSize int32  `json:"allocationUnitSize,omitempty"`
	DriveLetter        string `json:"driveLetter,omitempty"`
	// MountPath is a folder, with a trailing backslash as Windows lists access paths.
	MountPath string `json:"mountPath,omitempty"`
}

// DocContainerd is containerd's configuration.
type DocContainerd struct {
	Directory  string `json:"directory"`
	ConfigPath string `json:"configPath"`
	Config     string `json:"config"`
	// Register makes containerd a service from a freshly downloaded archive.
	Register bool `json:"register"`
	// LogFile is where the containerd service writes its log (--log-file; without it a containerd
	// service's log goes nowhere): given when the service is registered, added to an image's.
	LogFile string `json:"logFile"`
	// LogRotation rotates LogFile, which containerd never rotates itself.
	LogRotation DocLogRotation `json:"logRotation"`
	// Hosts are the hosts.toml and CA files of the configured registries, under the config's
	// config_path; other host folders there are left alone.
	Hosts []DocFile `json:"hosts,omitempty"`
}

// FirewallRule opens one inbound port.
type FirewallRule struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	Port     int32  `json:"port"`
}

// Defender holds Microsoft Defender exclusions.
type Defender struct {
	Paths     []string `json:"paths"`
	Processes []string `json:"processes"`
}

// DocFile is a file written on the node: Content is base64 of the exact bytes. Append files are
// appended once (the node records it in its state directory).
type DocFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Append  bool   `json:"append,omitempty"`
}

// DocKubelet is the kubelet Windows service.
type DocKubelet struct {
	Binary string `json:"binary"`
	// Args are complete "--name=value" flags; the script quotes them for the service command line.
	Args []string `json:"args"`
	// LogRunner wraps the kubelet so that its output is kept in a file.
	LogRunner DocLogRunner `json:"logRunner"`
}

// DocLogRunner is kube-log-runner in front of the kubelet on the service's command line. A service
// that already runs the kubelet under an image's kube-log-runner keeps that wrapper; without the
// program on the node, the kubelet runs alone (and keeps no log file).
type DocLogRunner struct {
	Binary string `json:"binary"`
	// Args are kube-log-runner's own flags, before the kubelet's program.
	Args    []string `json:"args"`
	LogFile string   `json:"logFile"`
}

// DocJoin is the kubeadm join step.
type DocJoin struct {
	Kubeadm    string `json:"kubeadm"`
	ConfigPath string `json:"configPath"`
	// Config is the kubeadm JoinConfiguration (YAML); it holds the token and is deleted after
	// the join.
	Config string `json:"config"`
	// Kubeconfig exists once the node has joined; its presence makes the join idempotent.
	Kubeconfig string `json:"kubeconfig"`
}

// DocLogRotation is the scheduled task that rotates the log files of services that never rotate
// them (rotate-logs.ps1, written to ScriptPath with its configuration at ConfigPath): every
// IntervalMinutes, a file of Files at or past MaxBytes is copied aside and emptied, and rotated
// copies older than MaxAgeHours are removed.
type DocLogRotation struct {
	Task       string `json:"task"`
	ScriptPath string `json:"scriptPath"`
	// Script is rotate-logs.ps1 (base64), the static script capwin ships.
	Script          string   `json:"script"`
	ConfigPath      string   `json:"configPath"`
	Files           []string `json:"files"`
	MaxBytes        int64    `json:"maxBytes"`
	MaxAgeHours     int      `json:"maxAgeHours"`
	IntervalMinutes int      `json:"intervalMinutes"`
}
