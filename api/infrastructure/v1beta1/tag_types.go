package v1beta1

// VCenterTag is a vSphere tag, named by its category and its name (tag names are unique only
// within their category). Both must exist in vCenter before the machine is created; the
// category must be associable with virtual machines.
type VCenterTag struct {
	// category is the name of the tag's category.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Category string `json:"category"`

	// name is the tag's name within its category.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
}

// VCenterTagStatus is a tag of spec.tags that is attached to the VM, with its vCenter id.
type VCenterTagStatus struct {
	// category is the name of the tag's category.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Category string `json:"category"`

	// name is the tag's name within its category.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// id is vCenter's id of the tag (urn:vmomi:InventoryServiceTag:...).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ID string `json:"id"`
}
