package hypervsim

import (
	"slices"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// VMSettings are a VM's Set-VM checkpoint and automatic start and stop settings, as Get-VM
// reports them.
type VMSettings struct {
	CheckpointType       string
	AutomaticCheckpoints bool
	AutomaticStartAction string
	AutomaticStartDelay  int32
	AutomaticStopAction  string
}

// newVMSettings are what New-VM gives a VM: production checkpoints, automatic checkpoints on
// (Windows 10 and later turn them on for new VMs), start if it was running, save.
func newVMSettings() VMSettings {
	return VMSettings{CheckpointType: "Production", AutomaticCheckpoints: true, AutomaticStartAction: "StartIfRunning", AutomaticStopAction: "Save"}
}

// setVMSettings mirrors create.ps1's Set-CapwinVMSettings: one Set-VM, whose enum parameters
// refuse a value outside their enum (an empty stop action too: it is always passed); a checkpoint
// type, start action or delay left out is not changed.
func setVMSettings(vm *VM, in wire.VMSettings) error {
	enums := []struct {
		param, value string
		values       []string
		optional     bool
	}{
		{"CheckpointType", in.CheckpointType, []string{"Disabled", "Production", "ProductionOnly", "Standard"}, true},
		{"AutomaticStartAction", in.AutomaticStartAction, []string{"Nothing", "StartIfRunning", "Start"}, true},
		{"AutomaticStopAction", in.AutomaticStopAction, []string{"TurnOff", "Save", "ShutDown"}, false},
	}
	for _, e := range enums {
		if (e.value != "" || !e.optional) && !slices.Contains(e.values, e.value) {
			return fail(wire.KindFailed, "Cannot bind parameter '%s'. Cannot convert value %q to type: the value is not one of %v", e.param, e.value, e.values)
		}
	}
	s := &vm.Settings
	s.AutomaticCheckpoints, s.AutomaticStopAction = in.AutomaticCheckpoints, in.AutomaticStopAction
	if in.CheckpointType != "" {
		s.CheckpointType = in.CheckpointType
	}
	if in.AutomaticStartAction != "" {
		s.AutomaticStartAction = in.AutomaticStartAction
	}
	if in.AutomaticStartDelay >= 0 {
		s.AutomaticStartDelay = in.AutomaticStartDelay
	}
	return nil
}
