package wire

// VMSettings are the Set-VM checkpoint and automatic start and stop settings of create.ps1. An
// empty CheckpointType or AutomaticStartAction is not set, so the VM keeps the host's default
// for a new VM, as before these settings were fields.
type VMSettings struct {
	CheckpointType       string `json:"checkpointType,omitempty"`
	AutomaticCheckpoints bool   `json:"automaticCheckpoints"`
	AutomaticStartAction string `json:"automaticStartAction,omitempty"`
	// AutomaticStartDelay is in seconds; set only with a start action (-1: not set).
	AutomaticStartDelay int32  `json:"automaticStartDelay"`
	AutomaticStopAction string `json:"automaticStopAction"`
}
