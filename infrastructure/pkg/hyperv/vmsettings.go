package hyperv

import (
	"cmp"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

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

// vmSettings applies the defaults capwin always used: no automatic checkpoints, TurnOff.
func vmSettings(spec *infrav1.HyperVMachineSpec) VMSettings {
	out := VMSettings{
		CheckpointType:       string(spec.CheckpointType),
		AutomaticCheckpoints: spec.AutomaticCheckpoints != nil && *spec.AutomaticCheckpoints,
		AutomaticStartAction: string(spec.AutomaticStartAction),
		AutomaticStartDelay:  -1,
		AutomaticStopAction:  string(cmp.Or(spec.AutomaticStopAction, infrav1.StopTurnOff)),
	}
	if d := spec.AutomaticStartDelaySeconds; d != nil {
		out.AutomaticStartDelay = *d
	}
	return out
}

// DefaultVMSettings are the settings of a spec that sets none: capwin's settings before they were
// fields.
func DefaultVMSettings() VMSettings { return vmSettings(&infrav1.HyperVMachineSpec{}) }
