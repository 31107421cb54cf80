package v1beta1

// HyperVCheckpointType is Set-VM -CheckpointType.
// +kubebuilder:validation:Enum=Disabled;Production;ProductionOnly;Standard
type HyperVCheckpointType string

// Hyper-V checkpoint types.
const (
	// CheckpointDisabled allows no checkpoint.
	CheckpointDisabled HyperVCheckpointType = "Disabled"
	// CheckpointProduction takes application-consistent checkpoints (VSS in the guest) and falls
	// back to standard ones when the guest cannot.
	CheckpointProduction HyperVCheckpointType = "Production"
	// CheckpointProductionOnly takes production checkpoints and fails instead of falling back.
	CheckpointProductionOnly HyperVCheckpointType = "ProductionOnly"
	// CheckpointStandard saves the VM's memory and device state with its disks.
	CheckpointStandard HyperVCheckpointType = "Standard"
)

// HyperVAutomaticStartAction is Set-VM -AutomaticStartAction: what the VM does when the host starts.
// +kubebuilder:validation:Enum=Nothing;StartIfRunning;Start
type HyperVAutomaticStartAction string

// Hyper-V automatic start actions.
const (
	// StartNothing leaves the VM off.
	StartNothing HyperVAutomaticStartAction = "Nothing"
	// StartIfRunning starts the VM if it ran when the host stopped.
	StartIfRunning HyperVAutomaticStartAction = "StartIfRunning"
	// StartAlways always starts the VM.
	StartAlways HyperVAutomaticStartAction = "Start"
)

// HyperVAutomaticStopAction is Set-VM -AutomaticStopAction: what the VM does when the host shuts down.
// +kubebuilder:validation:Enum=TurnOff;Save;ShutDown
type HyperVAutomaticStopAction string

// Hyper-V automatic stop actions.
const (
	// StopTurnOff cuts the VM's power.
	StopTurnOff HyperVAutomaticStopAction = "TurnOff"
	// StopSave saves the VM's memory to disk.
	StopSave HyperVAutomaticStopAction = "Save"
	// StopShutDown shuts the guest down.
	StopShutDown HyperVAutomaticStopAction = "ShutDown"
)

// HyperVVMSettings are a VM's checkpoint and automatic start and stop settings (Set-VM), set when
// capwin creates the VM. Every field left unset keeps what capwin always did: the host's defaults
// for a new VM's checkpoint type and start action, no automatic checkpoints, and TurnOff.
type HyperVVMSettings struct {
	// checkpointType is Disabled, Production, ProductionOnly or Standard; unset keeps the host's
	// default for a new VM (Production).
	// +optional
	CheckpointType HyperVCheckpointType `json:"checkpointType,omitempty"`

	// automaticCheckpoints lets Hyper-V take a checkpoint each time the VM starts (Windows 10 and
	// Windows Server 2016 or later); unset or false: off.
	// +optional
	AutomaticCheckpoints *bool `json:"automaticCheckpoints,omitempty"`

	// automaticStartAction is what the VM does when the host starts: Nothing, StartIfRunning or
	// Start; unset keeps the host's default for a new VM (StartIfRunning).
	// +optional
	AutomaticStartAction HyperVAutomaticStartAction `json:"automaticStartAction,omitempty"`

	// automaticStartDelaySeconds delays the automatic start by this many seconds, e.g. to spread
	// the boot storm after a host restart. It needs an automaticStartAction other than Nothing.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	AutomaticStartDelaySeconds *int32 `json:"automaticStartDelaySeconds,omitempty"`

	// automaticStopAction is what the VM does when the host shuts down: TurnOff (default), Save or
	// ShutDown (asks the guest through the Shutdown integration service). Save keeps a file as
	// large as the VM's memory in the VM's folder for the saved state.
	// +optional
	AutomaticStopAction HyperVAutomaticStopAction `json:"automaticStopAction,omitempty"`
}
