package hyperv

import (
	"cmp"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// vmSettings applies the defaults capwin always used: no automatic checkpoints, TurnOff.
func vmSettings(spec *infrav1.HyperVMachineSpec) wire.VMSettings {
	out := wire.VMSettings{
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
func DefaultVMSettings() wire.VMSettings { return vmSettings(&infrav1.HyperVMachineSpec{}) }
