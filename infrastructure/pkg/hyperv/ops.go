package hyperv

import (
	"cmp"
	"fmt"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// action names what an operation does to which object, for its errors: "create VM win-md-0-x",
// "power on VM 6f1c…". A VM not known by id yet is named by the UID of its machine.
func action(op wire.Script, in any) string {
	vm, power := "", "power"
	switch v := in.(type) {
	case wire.CreateInput:
		vm = v.Name
	case wire.VMKey:
		vm = cmp.Or(v.ID, "of UID "+v.UID)
	case wire.PowerInput:
		vm, power = v.ID, cmp.Or(powerWords[v.Action], "power")
	case wire.GuestInput:
		vm = v.ID
	case wire.GuestLogsInput:
		vm = v.ID
	case wire.JobRef:
		return "read job " + v.Job
	case wire.ParentInput:
		return "copy parent disk " + v.URL
	case wire.PeekInput:
		return fmt.Sprintf("read the guest state of %d VMs", len(v.IDs))
	}
	switch op.Name {
	case wire.OpHost.Name:
		return "check the VM and disk folders and virtual switches"
	case wire.OpCreate.Name:
		return "create VM " + vm
	case wire.OpFind.Name:
		return "find VM " + vm
	case wire.OpPower.Name:
		return power + " VM " + vm
	case wire.OpRemove.Name:
		return "delete VM " + vm
	case wire.OpEject.Name:
		return "eject the config drive of VM " + vm
	case wire.OpGuest.Name:
		return "start the bootstrap script in VM " + vm
	case wire.OpGuestLogs.Name:
		return "collect the logs of the guest of VM " + vm
	case wire.OpLocate.Name:
		return "ask the failover cluster for the node of VM " + vm
	}
	return "run operation " + op.Name + " for VM " + vm
}

// powerWords name the power actions.
var powerWords = map[string]string{wire.PowerStart: "power on", wire.PowerOff: "power off", wire.PowerShutdown: "shut down the guest of"}
