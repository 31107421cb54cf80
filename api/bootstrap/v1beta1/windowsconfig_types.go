package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Format is the shape of the bootstrap data.
// +kubebuilder:validation:Enum=cloud-config;powershell
type Format string

const (
	// FormatCloudConfig is cloudbase-init user data: a multipart MIME document with a
	// #cloud-config part (files, users, NTP, time zone) and a #ps1_sysnative part (the join).
	FormatCloudConfig Format = "cloud-config"
	// FormatPowerShell is one self-contained #ps1_sysnative script, run by the infrastructure
	// provider in the guest (VMware Tools guest operations, PowerShell Direct).
	FormatPowerShell Format = "powershell"
)

// DefaultCRISocket is containerd's named pipe on Windows.
const DefaultCRISocket = "npipe:////./pipe/containerd-containerd"

// WindowsConfigSpec describes how a Windows Server machine is prepared and joined as a worker.
// +kubebuilder:validation:XValidation:rule="!has(self.files) || self.files.all(f, self.files.exists_one(g, g.path.lowerAscii().replace('/', '\\\\') == f.path.lowerAscii().replace('/', '\\\\')))",message="files: each path may appear only once (paths compare case-insensitively, '/' equals '\\')"
type WindowsConfigSpec struct {
	// format of the bootstrap data: cloud-config (cloudbase-init multipart, the default) or
	// powershell (one #ps1_sysnative script).
	// +kubebuilder:default=cloud-config
	// +optional
	Format Format `json:"format,omitempty"`

	// nodeRegistration configures how the node registers with the cluster (kubeadm join).
	// +optional
	NodeRegistration NodeRegistration `json:"nodeRegistration,omitempty,omitzero"`

	// kubeletConfiguration sets KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields on
	// this node, e.g. maxPods, systemReserved, kubeReserved, evictionHard, evictionSoft (with
	// evictionSoftGracePeriod), imageGCHighThresholdPercent and imageGCLowThresholdPercent.
	// kubeadm join merges it over the cluster's kubelet-config ConfigMap as a JSON merge patch of
	// its kubeletconfiguration target: a map merges key by key, any other field is replaced.
	// Each field is checked against the kubelet's own types and an unknown one is refused by name;
	// so are the fields capwin sets from other fields or on the kubelet's command line (which
	// would win over the file), those Windows does not support (cgroups, swap, sysctls), and a
	// field also set by a flag in nodeRegistration.kubeletExtraArgs.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MaxProperties=128
	KubeletConfiguration *runtime.RawExtension `json:"kubeletConfiguration,omitempty"`

	// containerd configures the container runtime.
	// +optional
	Containerd Containerd `json:"containerd,omitempty,omitzero"`

	// hyperVIsolation enables the Hyper-V Windows feature and the runhcs-wcow-hypervisor runtime
	// handler, so pods can run images of an older Windows build (RuntimeClass windows-hyperv).
	// The VM needs nested virtualization for this.
	// +optional
	HyperVIsolation bool `json:"hyperVIsolation,omitempty"`

	// cni prepares the node for the cluster's Windows CNI (firewall, directories, overlay settings).
	// +optional
	CNI CNI `json:"cni,omitempty,omitzero"`

	// binaries says where kubelet, kubeadm and containerd come from.
	// +optional
	Binaries Binaries `json:"binaries,omitempty,omitzero"`

	// proxy settings for the node (machine-wide environment for containerd, kubelet and downloads).
	// +optional
	Proxy Proxy `json:"proxy,omitempty,omitzero"`

	// ntp configures the Windows time service.
	// +optional
	NTP NTP `json:"ntp,omitempty,omitzero"`

	// timezone is a Windows time zone id (Get-TimeZone -ListAvailable), e.g. "UTC" or
	// "W. Europe Standard Time"; not an IANA name. The bootstrap script sets it in both formats.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9 ()+.,_-]+$`
	Timezone string `json:"timezone,omitempty"`

	// prePull lists images pulled during the bootstrap, before the node joins (docs/bootstrap.md#pre-pulled-images).
	// +optional
	PrePull *PrePull `json:"prePull,omitempty"`

	// disks are data disks the node initializes, formats and mounts before containerd starts
	// (the disks themselves are attached by the infrastructure provider).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Disks []Disk `json:"disks,omitempty"`

	// activeDirectory joins the node to a domain before it joins the cluster (a reboot follows the
	// domain join). The computer name is the one the infrastructure provider sets (at most 15
	// characters). Deleting the Machine does not remove the computer account from the domain.
	// null (what the cluster templates pass by default) means no domain join.
	// +optional
	// +nullable
	ActiveDirectory *ActiveDirectory `json:"activeDirectory,omitempty"` //nolint:kubeapilinter // nonullable: clusterctl's variable defaults cannot spell {}, so the templates pass null for "no domain join"

	// users are local users to create, with SSH keys for OpenSSH server.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Users []User `json:"users,omitempty"`

	// files to write on the node before the join.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Files []File `json:"files,omitempty"`

	// preJoinCommands are PowerShell commands run before the node joins. Each runs once, from
	// its own file; a non-zero exit stops the bootstrap and is reported on the Machine.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	PreJoinCommands []string `json:"preJoinCommands,omitempty"`

	// postJoinCommands are PowerShell commands run after a successful join, once each.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	PostJoinCommands []string `json:"postJoinCommands,omitempty"`

	// defenderExclusions adds Microsoft Defender exclusions for containerd, kubelet and CNI paths
	// and processes (default true).
	// +kubebuilder:default=true
	// +optional
	DefenderExclusions *bool `json:"defenderExclusions,omitempty"`
}

// NodeRegistration holds the kubeadm join / kubelet registration settings.
type NodeRegistration struct {
	// name of the Node. Empty (the default) means the computer name, which the infrastructure
	// provider sets from the Machine (at most 15 characters, lower-cased by the kubelet).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// criSocket is the container runtime endpoint.
	// +kubebuilder:default="npipe:////./pipe/containerd-containerd"
	// +kubebuilder:validation:Pattern=`^npipe:////\./pipe/[A-Za-z0-9._-]+$`
	// +optional
	CRISocket string `json:"criSocket,omitempty"`

	// taints the Node registers with. Unset means os=windows:NoSchedule; an explicit empty list
	// registers no taint.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Taints *[]Taint `json:"taints,omitempty"`

	// labels the kubelet puts on its Node. Keys under kubernetes.io and k8s.io are limited to
	// those the NodeRestriction admission plugin lets a kubelet set.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`

	// kubeletExtraArgs are extra kubelet flags (name without dashes). They override capwin's
	// defaults of the same name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	KubeletExtraArgs []Arg `json:"kubeletExtraArgs,omitempty"`

	// ignorePreflightErrors are kubeadm preflight checks to ignore, e.g. "SystemVerification".
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9-]+$`
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`
}

// Taint is a Node taint registered by the kubelet.
type Taint struct {
	// key of the taint.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`
	// value of the taint.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value,omitempty"`
	// effect of the taint.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect string `json:"effect"`
}

// Arg is a kubelet flag.
type Arg struct {
	// name of the flag without leading dashes.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9-]*$`
	Name string `json:"name"`
	// value of the flag.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// Containerd configures containerd on the node.
type Containerd struct {
	// pauseImage is the sandbox image; it must exist for the node's Windows build.
	// +kubebuilder:default="registry.k8s.io/pause:3.10"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	PauseImage string `json:"pauseImage,omitempty"`

	// registries configure how containerd reaches registries: mirrors, private CAs and
	// credentials for node-level pulls. Each entry becomes containerd's hosts.toml under
	// C:\Program Files\containerd\certs.d; host folders baked into the image for other
	// registries are kept. The pause image is pulled through these settings too.
	// +optional
	// +listType=map
	// +listMapKey=host
	// +kubebuilder:validation:MaxItems=32
	Registries []Registry `json:"registries,omitempty"`

	// root is containerd's root directory (images, snapshots, container layers). Default
	// C:\ProgramData\containerd\root. Put it on a data disk of spec.disks (a path under its drive
	// letter or mount path) to keep images off the system disk.
	// +optional
	// +kubebuilder:validation:MinLength=4
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[A-Za-z]:\\[^<>:"/|?*]+$`
	Root string `json:"root,omitempty"`

	// state is containerd's state directory (sockets, running containers' state). Default
	// C:\ProgramData\containerd\state; like root, it may be on a data disk of spec.disks.
	// +optional
	// +kubebuilder:validation:MinLength=4
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[A-Za-z]:\\[^<>:"/|?*]+$`
	State string `json:"state,omitempty"`

	// version is the containerd release of the image, major.minor ("1.7", "2.2", "2.3"). The
	// bootstrap writes config.toml in the version that release reads as it is: 2 for 1.7 and 2.0,
	// 3 for 2.1 and 2.2, 4 for 2.3 and later. Unset: the release binaries.containerd's file name
	// names (containerd-2.1.4-windows-amd64.tar.gz), else config version 2, which every release
	// reads (2.x converts it at every start and logs that it did).
	// +optional
	Version ContainerdVersion `json:"version,omitempty"`
}

// ContainerdVersion is a containerd release, major.minor.
// +kubebuilder:validation:Pattern=`^[0-9]\.[0-9]{1,2}$`
// +kubebuilder:validation:MaxLength=4
type ContainerdVersion string

// CNIPlugin names a Windows CNI that the node is prepared for.
// +kubebuilder:validation:Enum=calico;flannel;none
type CNIPlugin string

// CNI plugins.
const (
	CNICalico  CNIPlugin = "calico"
	CNIFlannel CNIPlugin = "flannel"
	CNINone    CNIPlugin = "none"
)

// CNI prepares the node for a VXLAN overlay.
// +kubebuilder:validation:XValidation:rule="self.plugin != 'flannel' || !has(self.vxlanVNI) || self.vxlanVNI == 4096",message="flannel on Windows requires vxlanVNI 4096"
// +kubebuilder:validation:XValidation:rule="self.plugin != 'flannel' || !has(self.vxlanPort) || self.vxlanPort == 4789",message="flannel on Windows requires vxlanPort 4789"
type CNI struct {
	// plugin is calico (VXLAN, HNS dataplane), flannel (overlay) or none.
	// +kubebuilder:default=calico
	// +optional
	Plugin CNIPlugin `json:"plugin,omitempty"`
	// vxlanVNI is the overlay's VXLAN network identifier (Windows needs >= 4096).
	// +kubebuilder:default=4096
	// +kubebuilder:validation:Minimum=4096
	// +kubebuilder:validation:Maximum=16777215
	// +optional
	VXLANVNI int32 `json:"vxlanVNI,omitempty"`
	// vxlanPort is the overlay's UDP port (Windows HNS uses 4789).
	// +kubebuilder:default=4789
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	VXLANPort int32 `json:"vxlanPort,omitempty"`
}

// BinarySourceType says where node binaries come from.
// +kubebuilder:validation:Enum=Prebaked;Download
type BinarySourceType string

// Binary sources.
const (
	// BinariesPrebaked: the image already has them (image-builder Windows images, C:\k).
	BinariesPrebaked BinarySourceType = "Prebaked"
	// BinariesDownload: download each from a URL and check its sha256.
	BinariesDownload BinarySourceType = "Download"
)

// Binaries locate kubelet.exe, kubeadm.exe and containerd.
// +kubebuilder:validation:XValidation:rule="self.source != 'Download' || (has(self.kubelet) && has(self.kubeadm))",message="binaries: source Download needs kubelet and kubeadm URLs"
// +kubebuilder:validation:XValidation:rule="self.source == 'Download' || (!has(self.kubelet) && !has(self.kubeadm) && !has(self.containerd) && !has(self.kubeLogRunner))",message="binaries: URLs are only used with source Download"
type Binaries struct {
	// source is Prebaked (default) or Download.
	// +kubebuilder:default=Prebaked
	// +optional
	Source BinarySourceType `json:"source,omitempty"`
	// directory holding kubelet.exe and kubeadm.exe.
	// +kubebuilder:default="C:\\k"
	// +kubebuilder:validation:MaxLength=240
	// +kubebuilder:validation:Pattern=`^[A-Za-z]:[\\/]`
	// +optional
	Directory string `json:"directory,omitempty"`
	// kubelet is kubelet.exe's download.
	// +optional
	Kubelet *Download `json:"kubelet,omitempty"`
	// kubeadm is kubeadm.exe's download.
	// +optional
	Kubeadm *Download `json:"kubeadm,omitempty"`
	// containerd is a containerd release archive (.tar.gz) for Windows; unset keeps the
	// containerd the image has.
	// +optional
	Containerd *Download `json:"containerd,omitempty"`
	// kubeLogRunner is kube-log-runner.exe's download (Kubernetes' Windows node binaries have it,
	// of the kubelet's version): the kubelet service runs under it so that the kubelet's output is
	// kept in C:\var\log\kubelet\kubelet.log, rotated from v1.34. Unset uses the one in directory
	// if the image has it (image-builder's do); without it the kubelet keeps no log file.
	// +optional
	KubeLogRunner *Download `json:"kubeLogRunner,omitempty"`
}

// Download is a file fetched over HTTP(S) and verified by its SHA-256.
type Download struct {
	// url to fetch (http or https).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	URL string `json:"url"`
	// sha256 of the file, 64 hex digits.
	// +required
	// +kubebuilder:validation:Pattern=`^[A-Fa-f0-9]{64}$`
	SHA256 string `json:"sha256"`
}

// Proxy holds the node's proxy settings.
type Proxy struct {
	// httpProxy URL.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	HTTPProxy string `json:"httpProxy,omitempty"`
	// httpsProxy URL.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// noProxy lists hosts, domains and CIDRs that bypass the proxy.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[^\s,]+$`
	NoProxy []string `json:"noProxy,omitempty"`
}

// NTP configures the Windows time service.
type NTP struct {
	// servers to synchronise with.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9.:_-]+$`
	Servers []string `json:"servers,omitempty"`
}

// User is a local Windows user.
type User struct {
	// name of the user.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]*$`
	Name string `json:"name"`
	// groups the user is added to, e.g. Administrators.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9 ._-]+$`
	Groups []string `json:"groups,omitempty"`
	// sshAuthorizedKeys for OpenSSH server (administrators' keys go to
	// C:\ProgramData\ssh\administrators_authorized_keys, as Windows OpenSSH requires).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=16384
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
}

// Encoding of a file's content as given in the spec.
// +kubebuilder:validation:Enum=base64;gzip;gzip+base64
type Encoding string

// File content encodings.
const (
	EncodingBase64     Encoding = "base64"
	EncodingGzip       Encoding = "gzip"
	EncodingGzipBase64 Encoding = "gzip+base64"
)

// File is written on the node before the join.
// +kubebuilder:validation:XValidation:rule="has(self.content) != has(self.contentFrom)",message="files: set exactly one of content and contentFrom"
type File struct {
	// path is a Windows absolute path, e.g. C:\k\extra.conf.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=240
	Path string `json:"path"`
	// encoding of content (or of the Secret's value); unset means plain text.
	// +optional
	Encoding Encoding `json:"encoding,omitempty"`
	// content of the file.
	// +optional
	// +kubebuilder:validation:MaxLength=262144
	Content *string `json:"content,omitempty"`
	// contentFrom reads the content from a Secret in the config's namespace.
	// +optional
	ContentFrom *FileSource `json:"contentFrom,omitempty"`
	// append to the file instead of replacing it (done once, even across reboots).
	// +optional
	Append bool `json:"append,omitempty"`
}

// FileSource is a reference to a Secret key.
type FileSource struct {
	// secret holding the content.
	// +required
	Secret SecretKey `json:"secret"`
}

// SecretKey names a key of a Secret.
type SecretKey struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// key within the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// WindowsConfigStatus is the observed state of a WindowsConfig.
type WindowsConfigStatus struct {
	// conditions are Ready, DataSecretAvailable, ComputerAccountReady and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization reports the contract's provisioning milestones.
	// +optional
	Initialization WindowsConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the Secret holding the bootstrap data (keys value and format).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// observedGeneration is the last generation reconciled without error.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// activeDirectory is the node's computer account, when spec.activeDirectory.directory is set.
	// +optional
	ActiveDirectory *ActiveDirectoryStatus `json:"activeDirectory,omitempty"`
}

// WindowsConfigInitializationStatus carries the contract's initialization flags.
// +kubebuilder:validation:MinProperties=1
type WindowsConfigInitializationStatus struct {
	// dataSecretCreated is true once the bootstrap data Secret has been created.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=windowsconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Format",type="string",JSONPath=".spec.format",description="Format of the bootstrap data"
// +kubebuilder:printcolumn:name="Data secret created",type="boolean",JSONPath=".status.initialization.dataSecretCreated",description="Bootstrap data Secret exists"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// WindowsConfig is the bootstrap configuration of one Windows Machine.
type WindowsConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration.
	// +optional
	Spec WindowsConfigSpec `json:"spec,omitempty,omitzero"`
	// status is the observed state.
	// +optional
	Status WindowsConfigStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the conditions (CAPI util/conditions setter/getter).
func (c *WindowsConfig) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *WindowsConfig) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// WindowsConfigList is a list of WindowsConfig.
type WindowsConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WindowsConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &WindowsConfig{}, &WindowsConfigList{})
}
