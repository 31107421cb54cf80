package v1beta1

// PrePull lists images containerd pulls while the node bootstraps: after containerd starts and
// Defender exclusions are set, before the node joins the cluster. So the node registers with
// them already on disk, and a rollout counts a new node as capacity only once its first pods
// can start without a pull of several GB. Each pull goes through containerd.registries (mirrors,
// CAs, credentials). A pull that fails or runs out of time is reported and logged, and the
// bootstrap goes on: the kubelet pulls the image when a pod needs it.
type PrePull struct {
	// images to pull, as pods name them, e.g. mcr.microsoft.com/windows/servercore:ltsc2022
	// (a tag or a digest; no tag means latest). [] for none.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Images []string `json:"images,omitempty"`

	// timeoutSeconds bounds all the pulls together (default 1800): images not pulled by then are
	// left to the kubelet.
	// +optional
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=7200
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
}
