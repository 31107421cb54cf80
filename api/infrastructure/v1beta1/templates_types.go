package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// VCenterMachineTemplateSpec holds the template of the VCenterMachines of a MachineDeployment
// or control plane.
type VCenterMachineTemplateSpec struct {
	// template is copied into each VCenterMachine.
	// +required
	Template VCenterMachineTemplateResource `json:"template,omitzero"`
}

// VCenterMachineTemplateResource is the metadata and spec given to each VCenterMachine.
type VCenterMachineTemplateResource struct {
	// metadata added to each VCenterMachine.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of each VCenterMachine.
	// +required
	Spec VCenterMachineSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=vcentermachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Template",type="string",JSONPath=".spec.template.spec.template"
// +kubebuilder:printcolumn:name="OS",type="string",JSONPath=".spec.template.spec.os"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// VCenterMachineTemplate is a template for VCenterMachines. Its spec is immutable: an OS upgrade
// is a new template referenced by the MachineDeployment.
type VCenterMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec holds the template.
	// +required
	Spec VCenterMachineTemplateSpec `json:"spec,omitzero"`
	// status tells the autoscaler what a node from this template offers.
	// +optional
	Status MachineTemplateStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// VCenterMachineTemplateList is a list of VCenterMachineTemplate.
type VCenterMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VCenterMachineTemplate `json:"items"`
}

// VCenterClusterTemplateSpec holds the template of a ClusterClass's VCenterClusters.
type VCenterClusterTemplateSpec struct {
	// template is copied into each VCenterCluster.
	// +required
	Template VCenterClusterTemplateResource `json:"template,omitzero"`
}

// VCenterClusterTemplateResource is the metadata and spec given to each VCenterCluster.
type VCenterClusterTemplateResource struct {
	// metadata added to each VCenterCluster.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of each VCenterCluster.
	// +required
	Spec VCenterClusterSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=vcenterclustertemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// VCenterClusterTemplate is a template for VCenterClusters (ClusterClass).
type VCenterClusterTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec holds the template.
	// +required
	Spec VCenterClusterTemplateSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true

// VCenterClusterTemplateList is a list of VCenterClusterTemplate.
type VCenterClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VCenterClusterTemplate `json:"items"`
}

// HyperVMachineTemplateSpec holds the template of the HyperVMachines of a MachineDeployment or
// control plane.
type HyperVMachineTemplateSpec struct {
	// template is copied into each HyperVMachine.
	// +required
	Template HyperVMachineTemplateResource `json:"template,omitzero"`
}

// HyperVMachineTemplateResource is the metadata and spec given to each HyperVMachine.
type HyperVMachineTemplateResource struct {
	// metadata added to each HyperVMachine.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of each HyperVMachine.
	// +required
	Spec HyperVMachineSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hypervmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Parent disk",type="string",JSONPath=".spec.template.spec.parentDisk"
// +kubebuilder:printcolumn:name="OS",type="string",JSONPath=".spec.template.spec.os"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// HyperVMachineTemplate is a template for HyperVMachines. Its spec is immutable: an OS upgrade is
// a new parent disk in a new template referenced by the MachineDeployment.
type HyperVMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec holds the template.
	// +required
	Spec HyperVMachineTemplateSpec `json:"spec,omitzero"`
	// status tells the autoscaler what a node from this template offers.
	// +optional
	Status MachineTemplateStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// HyperVMachineTemplateList is a list of HyperVMachineTemplate.
type HyperVMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HyperVMachineTemplate `json:"items"`
}

// HyperVClusterTemplateSpec holds the template of a ClusterClass's HyperVClusters.
type HyperVClusterTemplateSpec struct {
	// template is copied into each HyperVCluster.
	// +required
	Template HyperVClusterTemplateResource `json:"template,omitzero"`
}

// HyperVClusterTemplateResource is the metadata and spec given to each HyperVCluster.
type HyperVClusterTemplateResource struct {
	// metadata added to each HyperVCluster.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of each HyperVCluster.
	// +required
	Spec HyperVClusterSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hypervclustertemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// HyperVClusterTemplate is a template for HyperVClusters (ClusterClass).
type HyperVClusterTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec holds the template.
	// +required
	Spec HyperVClusterTemplateSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true

// HyperVClusterTemplateList is a list of HyperVClusterTemplate.
type HyperVClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HyperVClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes,
		&VCenterMachineTemplate{}, &VCenterMachineTemplateList{},
		&VCenterClusterTemplate{}, &VCenterClusterTemplateList{},
		&HyperVMachineTemplate{}, &HyperVMachineTemplateList{},
		&HyperVClusterTemplate{}, &HyperVClusterTemplateList{})
}

// GetConditions returns the conditions.
func (t *VCenterMachineTemplate) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions sets the conditions.
func (t *VCenterMachineTemplate) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }

// GetConditions returns the conditions.
func (t *HyperVMachineTemplate) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions sets the conditions.
func (t *HyperVMachineTemplate) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }
