package hypervsim

import (
	"encoding/json"
	"slices"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/guestnet"
)

// GuestNetwork is the network configuration the guest's launcher (launch.ps1, started through
// PowerShell Direct) left in the guest.
type GuestNetwork = guestnet.Network

// GuestAdapter is one adapter of a GuestNetwork.
type GuestAdapter = guestnet.Adapter

// runLauncher does what launch.ps1's Set-Network does with the document of the launcher guest.ps1
// copied into vm; an adapter the VM lacks fails the launcher, which reports it in its KVP status
// item as the script does.
func runLauncher(vm *VM, script []byte) {
	l, err := guest.ParseLaunch(script)
	if err != nil {
		return // not a launcher: nothing runs
	}
	hasMAC := func(mac string) bool {
		return slices.ContainsFunc(vm.NICs, func(n NIC) bool { return guest.NormalizeMAC(n.MAC) == mac })
	}
	if err := vm.GuestNetwork.Apply(l.NetworkSettings, hasMAC); err != nil {
		report, _ := json.Marshal(map[string]string{"step": "launch", "state": "Failed", "message": err.Error(), "logTail": ""})
		vm.KVP[l.Status.KVPValue] = string(report)
	}
}
