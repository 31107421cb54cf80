// Package userdata renders the bootstrap data of one Windows node from a typed model.
//
// The PowerShell that runs on the node is static (ps/*.ps1, embedded). Every per-machine value
// travels in ONE JSON document (Data) that the script decodes from a single base64 literal, so no
// value is ever spliced into code.
package userdata

import "time"

// Format selects the shape of the rendered user data.
type Format string

const (
	// FormatCloudConfig is cloudbase-init multipart MIME: a text/cloud-config part for what
	// cloudbase-init supports natively and a text/x-shellscript #ps1_sysnative part for the join.
	FormatCloudConfig Format = "cloud-config"
	// FormatPowerShell is one self-contained #ps1_sysnative script.
	FormatPowerShell Format = "powershell"
)

// Input is everything needed to render the user data of one node. The reconciler fills it from
// the WindowsConfig, the Machine, the Cluster and the workload cluster; it carries no API types.
type Input struct {
	Format Format
	// NodeName is the Kubernetes node name; empty means the lowercased computer name.
	NodeName          string
	KubernetesVersion string
	Join              Join
	Labels            map[string]string
	Taints            []Taint
	KubeletExtraArgs  []Arg
	// KubeletConfiguration is a JSON object of KubeletConfiguration fields that kubeadm join
	// merges over the cluster's kubelet-config (a merge patch) with capwin's own fields; nil for none
	// of the user's.
	KubeletConfiguration []byte
	// PauseImage is the sandbox image written into containerd's config.
	PauseImage string
	// Registries are containerd's registry hosts, with CA data and credentials resolved.
	Registries []Registry
	// ContainerdRoot and ContainerdState are containerd's directories ("": under
	// C:\ProgramData\containerd).
	ContainerdRoot, ContainerdState string
	// ContainerdConfigVersion is config.toml's version: 4 for containerd 2.3 and later, 3 for 2.1
	// and 2.2, 2 (or 0) for 1.7, 2.0 and a containerd of unknown release (2.x converts it).
	ContainerdConfigVersion int
	// Disks are data disks prepared before containerd starts.
	Disks []Disk
	// PrePull is the images pulled before the join (nil: none).
	PrePull         *PrePull
	HyperVIsolation bool
	CNI             CNI
	Binaries        Binaries
	Proxy           Proxy
	NTPServers      []string
	Timezone        string
	// Domain joins the node to Active Directory before the cluster join (nil: no domain).
	Domain *Domain
	Users  []User
	Files  []File
	// PreJoinCommands and PostJoinCommands are user PowerShell, each kept in its own file.
	PreJoinCommands    []string
	PostJoinCommands   []string
	DefenderExclusions bool
}

// Join holds the kubeadm discovery and join parameters.
type Join struct {
	// APIServerEndpoint is host:port of the control plane endpoint.
	APIServerEndpoint string
	Token             string
	// CACertHashes are "sha256:<hex>" public key pins of the cluster CA.
	CACertHashes          []string
	CRISocket             string
	IgnorePreflightErrors []string
}

// Taint is a node taint registered by the kubelet.
type Taint struct {
	Key, Value, Effect string
}

// Arg is one kubelet command-line flag without the leading dashes.
type Arg struct {
	Name, Value string
}

// CNI describes the overlay the node is prepared for.
type CNI struct {
	// Plugin is "calico", "flannel" or "none".
	Plugin    string
	VXLANVNI  int32
	VXLANPort int32
}

// Binaries says where kubelet, kubeadm and containerd come from.
type Binaries struct {
	// Directory holds kubelet.exe and kubeadm.exe (C:\k on image-builder images).
	Directory string
	// Nil downloads mean the binary is pre-baked in the image (or, for kube-log-runner, absent).
	Kubelet, Kubeadm, Containerd, KubeLogRunner *Download
}

// Download is a URL with the required SHA-256 of its content (lowercase hex).
type Download struct {
	URL, SHA256 string
}

// Proxy settings for the node's services.
type Proxy struct {
	HTTPProxy, HTTPSProxy string
	NoProxy               []string
}

// User is a local account created on the node.
type User struct {
	Name              string   `json:"name"`
	Groups            []string `json:"groups,omitempty"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
}

// File is a file written on the node. Content is as given by the user, in Encoding
// ("", "base64", "gzip", "gzip+base64"); gzip content is raw bytes held in the string.
type File struct {
	Path     string
	Encoding string
	Content  string
	Append   bool
}

// Registry is how containerd reaches one registry ("_default": every registry without an entry).
type Registry struct {
	Host    string
	Mirrors []Mirror
	// Access is for the registry itself.
	Access Access
}

// Mirror is an endpoint tried before the registry. Capabilities are "pull" and "resolve"
// (empty: both).
type Mirror struct {
	URL          string
	Capabilities []string
	OverridePath bool
	Access       Access
}

// Access is the TLS and credentials of one endpoint: CA is PEM data; an empty Username means
// no credentials.
type Access struct {
	CA                 string
	InsecureSkipVerify bool
	Username, Password string
}

// Domain is an Active Directory domain join: the credentials are those of an account allowed to
// join computers (to the OU).
type Domain struct {
	Name               string
	OrganizationalUnit string
	DNSServers         []string
	Username, Password string
	// ReuseAccount lets the join use an existing computer account of the node's name created
	// before AccountNotBefore (false: the join step stops, naming it). An account created since
	// (an earlier join of this Machine, e.g. before its VM was made again) is always reused.
	ReuseAccount     bool
	AccountNotBefore time.Time
	// Groups are the groups the bootstrap manager adds the account to; the node waits for them
	// after the join's restart, then renews its Kerberos tickets.
	Groups []string
}

// Disk is a data disk: found at SCSI Target/LUN, partitioned in PartitionStyle ("GPT" or "MBR";
// "" is GPT), formatted with FileSystem ("NTFS" or "ReFS"; "" is NTFS) and mounted at exactly one
// of DriveLetter or MountPath. AllocationUnitSize 0 is the file system's default.
type Disk struct {
	Target, LUN        int32
	PartitionStyle     string
	FileSystem         string
	Label              string
	AllocationUnitSize int32
	DriveLetter        string
	MountPath          string
}
