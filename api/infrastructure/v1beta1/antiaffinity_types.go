package v1beta1

// AntiAffinityMode says whether the VMs of one group (a MachineDeployment, a control plane) must or
// should run on different hosts.
// +kubebuilder:validation:Enum=None;Soft;Hard
type AntiAffinityMode string

// Anti-affinity modes.
const (
	// AntiAffinityNone places the VM wherever the hypervisor picks (the default).
	AntiAffinityNone AntiAffinityMode = "None"
	// AntiAffinitySoft asks DRS to keep the group's VMs on different hosts when it can; on a
	// standalone host it asks nothing (no rule).
	AntiAffinitySoft AntiAffinityMode = "Soft"
	// AntiAffinityHard forbids two VMs of the group on one host: a VM that would break that stays
	// powered off.
	AntiAffinityHard AntiAffinityMode = "Hard"
)

// VCenterAntiAffinity keeps the VMs of one MachineDeployment (or of one control plane) on
// different ESXi hosts of their compute cluster with a DRS VM-VM anti-affinity rule that capwin
// creates, keeps to the group's VMs and deletes with the group.
type VCenterAntiAffinity struct {
	// mode is None (no rule), Soft (a DRS "should" rule; none on a standalone host) or Hard (a
	// mandatory "must" rule, which needs a DRS cluster).
	// +kubebuilder:default=None
	// +optional
	Mode AntiAffinityMode `json:"mode,omitempty"`
}
