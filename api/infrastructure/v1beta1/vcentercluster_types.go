package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// VCenterClusterSpec says which vCenter a cluster's VMs live in and how to reach it.
// +kubebuilder:validation:XValidation:rule="!(has(self.insecure) && self.insecure) || (!has(self.thumbprint) && !has(self.caBundle))",message="insecure cannot be combined with thumbprint or caBundle"
// +kubebuilder:validation:XValidation:rule="(has(self.insecure) && self.insecure) || has(self.thumbprint) || has(self.caBundle) || (has(self.identityRef.kind) && self.identityRef.kind == 'VCenterClusterIdentity')",message="set thumbprint or caBundle to verify vCenter's certificate (or insecure: true to skip verification explicitly); with a VCenterClusterIdentity, its servers entry verifies it"
type VCenterClusterSpec struct {
	// server is vCenter's URL, e.g. https://vcenter.example.com.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https://[^\s/]+/?$`
	Server string `json:"server"`

	// thumbprint is the SHA-256 (or SHA-1) fingerprint of vCenter's certificate, as colon-separated
	// hex pairs. With a VCenterClusterIdentity, the identity's servers entry verifies the
	// certificate; thumbprint and caBundle may be left unset, and if set must be the entry's.
	// +optional
	// +kubebuilder:validation:Pattern=`^([A-Fa-f0-9]{2}:){19}[A-Fa-f0-9]{2}$|^([A-Fa-f0-9]{2}:){31}[A-Fa-f0-9]{2}$`
	Thumbprint string `json:"thumbprint,omitempty"`

	// caBundle is a PEM bundle of CAs that sign vCenter's certificate.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`

	// insecure skips certificate verification. Only for labs; it must be asked for explicitly.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// identityRef names the vCenter login: a Secret in the cluster's namespace with keys username
	// and password (kind Secret, the default), or a VCenterClusterIdentity that allows the
	// cluster's namespace. A Secret serves one VCenterCluster: the first to use it becomes its
	// owner, and others naming it are refused (CredentialsInUse).
	// +required
	IdentityRef VCenterIdentityReference `json:"identityRef,omitzero"`

	// datacenter is the default datacenter of the cluster's machines.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Datacenter string `json:"datacenter"`

	// controlPlaneEndpoint is the API endpoint of the workload cluster.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// failureDomains places machines; a Machine's failureDomain picks one by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	FailureDomains []VCenterFailureDomain `json:"failureDomains,omitempty"`
}

// SecretReference names a Secret in the same namespace.
type SecretReference struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// VCenterFailureDomain is a placement within vCenter.
// +kubebuilder:validation:XValidation:rule="has(self.zone) == has(self.region)",message="set both zone and region, or neither"
// +kubebuilder:validation:XValidation:rule="has(self.zone) == has(oldSelf.zone) && (!has(self.zone) || self.zone == oldSelf.zone)",message="zone is immutable: the domain's VMs carry its tag; add a new failure domain instead"
// +kubebuilder:validation:XValidation:rule="has(self.region) == has(oldSelf.region) && (!has(self.region) || self.region == oldSelf.region)",message="region is immutable: the domain's VMs carry its tag; add a new failure domain instead"
type VCenterFailureDomain struct {
	// name of the failure domain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// controlPlane says whether control-plane machines may be placed here.
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`
	// placement overrides the machine's datacenter, resource pool, datastore and folder.
	// +required
	Placement Placement `json:"placement,omitzero"`
	// networks replaces, by position, the networks of the machine's NICs in this domain: NIC i of
	// spec.network connects to networks[i] (a port group or network name or path); NICs past the
	// list keep their own network. A machine with fewer NICs than the list is refused
	// (InvalidSpec). The NICs' addresses, routes and MACs stay the machine's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Networks []string `json:"networks,omitempty"`
	// hostGroup keeps the domain's VMs on the hosts of a DRS host group of their compute cluster,
	// through a VM group and a VM-Host rule that capwin manages. Needs a DRS cluster.
	// +optional
	HostGroup *VCenterHostGroup `json:"hostGroup,omitempty"`
	// zone is a vSphere tag that the domain's VMs get, besides the machine's spec.tags (status.tags
	// lists both). Set with region, or not at all; immutable (set, or not, when the domain is
	// added).
	// +optional
	Zone *VCenterTag `json:"zone,omitempty"`
	// region is a vSphere tag that the domain's VMs get, like zone. Set with zone, or not at all;
	// immutable.
	// +optional
	Region *VCenterTag `json:"region,omitempty"`
}

// Placement says where a VM is created. Empty fields fall back to the machine's own settings.
type Placement struct {
	// datacenter name.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Datacenter string `json:"datacenter,omitempty"`
	// resourcePool path or name, e.g. /dc1/host/cluster1/Resources/windows.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ResourcePool string `json:"resourcePool,omitempty"`
	// datastore name.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Datastore string `json:"datastore,omitempty"`
	// folder path or name for the VM.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Folder string `json:"folder,omitempty"`
}

// VCenterClusterStatus is the observed state of a VCenterCluster.
type VCenterClusterStatus struct {
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
	// observedGeneration is the last generation reconciled without error.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ClusterInitializationStatus carries the contract's initialization flags.
// +kubebuilder:validation:MinProperties=1
type ClusterInitializationStatus struct {
	// provisioned is true once the cluster infrastructure is ready for machines.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=vcenterclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Server",type="string",JSONPath=".spec.server"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// VCenterCluster is the vCenter side of a Cluster.
type VCenterCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired state. server and datacenter are immutable, checked by the API server
	// itself (the webhook says so too): with a webhook bypassed, machines pointed away from their
	// VMs would leave them behind when deleted.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.server == oldSelf.server",message="field is immutable: the cluster's VMs live there and would be leaked; create a new cluster to move to another vCenter",fieldPath=".server"
	// +kubebuilder:validation:XValidation:rule="self.datacenter == oldSelf.datacenter",message="field is immutable: the cluster's VMs live there and would be leaked; create a new cluster to move to another datacenter",fieldPath=".datacenter"
	Spec VCenterClusterSpec `json:"spec,omitzero"`
	// status is the observed state.
	// +optional
	Status VCenterClusterStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the conditions.
func (c *VCenterCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *VCenterCluster) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// VCenterClusterList is a list of VCenterCluster.
type VCenterClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VCenterCluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &VCenterCluster{}, &VCenterClusterList{})
}
