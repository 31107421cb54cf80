package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// HyperVClusterSpec lists the Hyper-V hosts a cluster's VMs run on and how capwin reaches them.
// +kubebuilder:validation:XValidation:rule="has(self.credentialsRef) || self.hosts.all(h, has(h.credentialsRef))",message="set spec.credentialsRef, or a credentialsRef on every host"
// +kubebuilder:validation:XValidation:rule="has(self.failoverCluster) == has(oldSelf.failoverCluster)",message="failoverCluster cannot be added or removed: the VMs' providerIDs, folders and cluster roles depend on it"
type HyperVClusterSpec struct {
	// controlPlaneEndpoint is the API endpoint of the workload cluster. Once set it cannot change.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// hosts are the Hyper-V hosts (Windows Server with the Hyper-V role) that run the cluster's
	// VMs. Hosts may be added, removed and changed; a host is known by its name, so renaming one
	// is removing it and adding another.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Hosts []HyperVHost `json:"hosts"`

	// credentialsRef names the login of every host that names none of its own: a Secret in the
	// cluster's namespace with keys username and password (kind Secret, the default), or a
	// HyperVClusterIdentity that allows the cluster's namespace. The cluster templates point it at
	// the Secret they create, CLUSTER_NAME-hyperv. A Secret serves one HyperVCluster.
	// +optional
	CredentialsRef HyperVIdentityReference `json:"credentialsRef,omitzero"`

	// virtualSwitch is the Hyper-V virtual switch that a NIC naming no switch connects to. It
	// must exist on every host.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	VirtualSwitch string `json:"virtualSwitch"`

	// vmPath is the folder on each host where VM configurations are kept: an absolute path on a
	// local drive, e.g. D:\Hyper-V\capwin. A change applies to VMs created afterwards.
	// +kubebuilder:default=`C:\ProgramData\capwin\vms`
	// +optional
	// +kubebuilder:validation:MaxLength=248
	VMPath string `json:"vmPath,omitempty"`

	// diskPath is the folder on each host where the VMs' differencing disks are created: an
	// absolute path on a local drive. A change applies to VMs created afterwards.
	// +kubebuilder:default=`C:\ProgramData\capwin\disks`
	// +optional
	// +kubebuilder:validation:MaxLength=248
	DiskPath string `json:"diskPath,omitempty"`

	// failoverCluster names the Windows failover cluster whose nodes are the hosts: VMs are then
	// created on its Cluster Shared Volume (failoverCluster.storagePath, instead of vmPath and
	// diskPath) and registered as highly available roles (docs/hyperv/placement.md, Failover clusters). It
	// cannot be added or removed later.
	// +optional
	FailoverCluster *HyperVFailoverCluster `json:"failoverCluster,omitempty"`

	// failureDomains group the hosts (by rack, room or site); a Machine's failureDomain picks one
	// by name and its VM then runs on a host of that group. Every failure domain needs a host.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	FailureDomains []HyperVFailureDomain `json:"failureDomains,omitempty"`
}

// The folders of a HyperVCluster whose spec names none (the CRD's defaults).
const (
	DefaultHyperVVMPath   = `C:\ProgramData\capwin\vms`
	DefaultHyperVDiskPath = `C:\ProgramData\capwin\disks`
)

// WinRMAuthType is how capwin authenticates to a host's WinRM service.
// +kubebuilder:validation:Enum=NTLM;Basic
type WinRMAuthType string

// WinRM authentication types.
const (
	// WinRMAuthNTLM works with domain and local accounts.
	WinRMAuthNTLM WinRMAuthType = "NTLM"
	// WinRMAuthBasic works with local accounts only, and must be enabled on the host's WinRM
	// service (winrm set winrm/config/service/auth @{Basic="true"}).
	WinRMAuthBasic WinRMAuthType = "Basic"
)

// HyperVHost is one Hyper-V host, reached over WinRM HTTPS.
// +kubebuilder:validation:XValidation:rule="!(has(self.insecureSkipTLSVerify) && self.insecureSkipTLSVerify) || !has(self.caBundle)",message="insecureSkipTLSVerify cannot be combined with caBundle"
type HyperVHost struct {
	// name identifies the host within this cluster; a HyperVMachine's host and its status name it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// address is the host's DNS name or IP address, without scheme or port. With caBundle or the
	// system roots, the host's WinRM certificate must be valid for this name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Address string `json:"address"`

	// port of the host's WinRM HTTPS listener.
	// +kubebuilder:default=5986
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// credentialsRef names the Secret (in the cluster's namespace) with keys username and password
	// of an account in the host's Administrators or Hyper-V Administrators group. The username
	// may be DOMAIN\user, user@domain or a local account name. Unset: the cluster's
	// spec.credentialsRef (which may name a HyperVClusterIdentity; a host's own is a Secret).
	// +optional
	CredentialsRef SecretReference `json:"credentialsRef,omitzero"`

	// authType is NTLM (default) or Basic (local accounts only).
	// +kubebuilder:default=NTLM
	// +optional
	AuthType WinRMAuthType `json:"authType,omitempty"`

	// caBundle is a PEM bundle of CAs that sign the host's WinRM certificate. With neither
	// caBundle nor insecureSkipTLSVerify, the certificate is verified against the system roots.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`

	// insecureSkipTLSVerify skips verification of the host's certificate. Only for labs; it must
	// be set explicitly and cannot be combined with caBundle.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`

	// failureDomain is the name of the spec.failureDomains entry this host belongs to. A host
	// without one runs only machines that have no failure domain.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	FailureDomain string `json:"failureDomain,omitempty"`
}

// HyperVFailureDomain is a group of hosts that fail together.
type HyperVFailureDomain struct {
	// name of the failure domain; hosts join it with their failureDomain field.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// controlPlane says whether control-plane machines may be placed here.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`
	// virtualSwitch replaces the cluster's spec.virtualSwitch on the hosts of this domain: a NIC
	// naming no switch connects to it, and the hosts are checked for it instead. It must exist on
	// every host of the domain.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	VirtualSwitch string `json:"virtualSwitch,omitempty"`
}

// HyperVClusterStatus is the observed state of a HyperVCluster.
type HyperVClusterStatus struct {
	// conditions are Ready, HypervisorAvailable and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// initialization reports the contract's provisioning milestones.
	// +optional
	Initialization ClusterInitializationStatus `json:"initialization,omitempty,omitzero"`
	// failureDomains the cluster offers to Machines.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`
	// hosts is the last observed state of each host of spec.hosts.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Hosts []HyperVHostStatus `json:"hosts,omitempty"`
	// observedGeneration is the last generation reconciled without error.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// HyperVHostStatus is what capwin last saw of one host.
type HyperVHostStatus struct {
	// name of the host in spec.hosts.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// available is true when capwin could log in over WinRM and use Hyper-V; new VMs are placed
	// only on available hosts.
	// +required
	Available bool `json:"available"`
	// message says why the host is not available (connection, TLS or login error, missing
	// virtual switch ...).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// freeMemoryMiB is the host memory not in use, in MiB.
	// +optional
	// +kubebuilder:validation:Minimum=0
	FreeMemoryMiB int64 `json:"freeMemoryMiB,omitempty"`
	// vms is the number of this cluster's VMs on the host.
	// +optional
	// +kubebuilder:validation:Minimum=0
	VMs int32 `json:"vms,omitempty"`
	// gpu is what the host has free for machines with spec.gpu; unset when it has none.
	// +optional
	GPU *HyperVHostGPUStatus `json:"gpu,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hypervclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Switch",type="string",JSONPath=".spec.virtualSwitch"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// HyperVCluster is the Hyper-V side of a Cluster: the hosts its VMs run on.
type HyperVCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired state.
	// +required
	Spec HyperVClusterSpec `json:"spec,omitzero"`
	// status is the observed state.
	// +optional
	Status HyperVClusterStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the conditions.
func (c *HyperVCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *HyperVCluster) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// HyperVClusterList is a list of HyperVCluster.
type HyperVClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HyperVCluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &HyperVCluster{}, &HyperVClusterList{})
}

// HostCredentials is the reference of a host's login: the host's own credentialsRef (a Secret),
// else the cluster's.
func (s *HyperVClusterSpec) HostCredentials(h HyperVHost) HyperVIdentityReference {
	if h.CredentialsRef.Name != "" {
		return HyperVIdentityReference{Kind: SecretKind, Name: h.CredentialsRef.Name}
	}
	return s.CredentialsRef
}
