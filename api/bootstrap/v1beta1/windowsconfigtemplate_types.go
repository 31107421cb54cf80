package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// WindowsConfigTemplateSpec holds the template of the WindowsConfigs a MachineDeployment creates.
type WindowsConfigTemplateSpec struct {
	// template is copied into each Machine's WindowsConfig.
	// +required
	Template WindowsConfigTemplateResource `json:"template,omitzero"`
}

// WindowsConfigTemplateResource is the metadata and spec given to each WindowsConfig.
type WindowsConfigTemplateResource struct {
	// metadata added to each WindowsConfig.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of each WindowsConfig.
	// +optional
	Spec WindowsConfigSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=windowsconfigtemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Format",type="string",JSONPath=".spec.template.spec.format"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// WindowsConfigTemplate is a template for WindowsConfigs. Its spec is immutable: to change the
// nodes of a MachineDeployment, create a new template and point the MachineDeployment at it.
type WindowsConfigTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the template.
	// +required
	Spec WindowsConfigTemplateSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true

// WindowsConfigTemplateList is a list of WindowsConfigTemplate.
type WindowsConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WindowsConfigTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &WindowsConfigTemplate{}, &WindowsConfigTemplateList{})
}
