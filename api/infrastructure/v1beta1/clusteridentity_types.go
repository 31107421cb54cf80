package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterIdentitySpec is what both kinds of identity have: a login a platform team keeps in the
// capwin manager's namespace and lends to the clusters of chosen namespaces, whose users never
// read it.
type ClusterIdentitySpec struct {
	// secretName names a Secret in the capwin manager's namespace with keys username and
	// password. The identity becomes its owner; a Secret that already belongs to a cluster or
	// another identity is refused.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`

	// allowedNamespaces says whose clusters may use the identity. Unset, or with neither list nor
	// selector: no namespace may.
	// +optional
	AllowedNamespaces AllowedNamespaces `json:"allowedNamespaces,omitempty,omitzero"`
}

// AllowedNamespaces selects namespaces by name or by label; a namespace either selects is allowed.
type AllowedNamespaces struct {
	// list names namespaces.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	List []string `json:"list,omitempty"`

	// selector matches namespaces by their labels. An empty selector ({}) matches every
	// namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ClusterIdentityStatus is the observed state of a cluster identity.
type ClusterIdentityStatus struct {
	// ready is true when the identity owns its Secret and the Secret has a username and password.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// conditions holds Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=vcenterclusteridentities,scope=Cluster,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move-hierarchy=true"
// +kubebuilder:printcolumn:name="Secret",type="string",JSONPath=".spec.secretName"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// VCenterClusterIdentity is a vCenter login that VCenterClusters of the allowed namespaces may
// use (spec.identityRef kind VCenterClusterIdentity) without a Secret of their own.
type VCenterClusterIdentity struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired state.
	// +required
	Spec VCenterClusterIdentitySpec `json:"spec,omitzero"`
	// status is the observed state.
	// +optional
	Status ClusterIdentityStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// VCenterClusterIdentityList is a list of VCenterClusterIdentity.
type VCenterClusterIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VCenterClusterIdentity `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hypervclusteridentities,scope=Cluster,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move-hierarchy=true"
// +kubebuilder:printcolumn:name="Secret",type="string",JSONPath=".spec.secretName"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// HyperVClusterIdentity is a Hyper-V host login that HyperVClusters of the allowed namespaces may
// use (spec.credentialsRef kind HyperVClusterIdentity) without a Secret of their own.
type HyperVClusterIdentity struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired state.
	// +required
	Spec HyperVClusterIdentitySpec `json:"spec,omitzero"`
	// status is the observed state.
	// +optional
	Status ClusterIdentityStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// HyperVClusterIdentityList is a list of HyperVClusterIdentity.
type HyperVClusterIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HyperVClusterIdentity `json:"items"`
}

// GetConditions returns the conditions.
func (c *VCenterClusterIdentity) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *VCenterClusterIdentity) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// GetConditions returns the conditions.
func (c *HyperVClusterIdentity) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *HyperVClusterIdentity) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// Kinds an identityRef (VCenterCluster) or credentialsRef (HyperVCluster) may name.
const (
	SecretKind                 = "Secret"
	VCenterClusterIdentityKind = "VCenterClusterIdentity"
	HyperVClusterIdentityKind  = "HyperVClusterIdentity"
)

// VCenterIdentityReference names a VCenterCluster's login: a Secret in its namespace, or a
// VCenterClusterIdentity that allows its namespace.
type VCenterIdentityReference struct {
	// kind is Secret (default) or VCenterClusterIdentity.
	// +kubebuilder:default=Secret
	// +kubebuilder:validation:Enum=Secret;VCenterClusterIdentity
	// +optional
	Kind string `json:"kind,omitempty"`
	// name of the Secret or VCenterClusterIdentity.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// HyperVIdentityReference names the login of a HyperVCluster's hosts: a Secret in its namespace,
// or a HyperVClusterIdentity that allows its namespace.
type HyperVIdentityReference struct {
	// kind is Secret (default) or HyperVClusterIdentity.
	// +kubebuilder:default=Secret
	// +kubebuilder:validation:Enum=Secret;HyperVClusterIdentity
	// +optional
	Kind string `json:"kind,omitempty"`
	// name of the Secret or HyperVClusterIdentity.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// IsSecret reports whether the reference names a Secret (kind Secret or unset).
func (r VCenterIdentityReference) IsSecret() bool { return r.Kind == "" || r.Kind == SecretKind }

// IsSecret reports whether the reference names a Secret (kind Secret or unset).
func (r HyperVIdentityReference) IsSecret() bool { return r.Kind == "" || r.Kind == SecretKind }

func init() {
	objectTypes = append(objectTypes, &VCenterClusterIdentity{}, &VCenterClusterIdentityList{},
		&HyperVClusterIdentity{}, &HyperVClusterIdentityList{})
}
