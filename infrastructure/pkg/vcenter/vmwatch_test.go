package vcenter

import (
	"slices"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

// TestVMWatchValues: the watch compares a guest NIC by its normalized MAC and addresses, a key
// capwin writes by its value (removed is unset), and follows only properties the lifecycle reads
// in its one VM read.
func TestVMWatchValues(t *testing.T) {
	nics := func(mac string, ips ...string) types.ArrayOfGuestNicInfo {
		return types.ArrayOfGuestNicInfo{GuestNicInfo: []types.GuestNicInfo{{MacAddress: mac, IpAddress: ips}}}
	}
	if a, b := watchValue("guest.net", nics("00-50-56-AA-BB-CC", "10.0.0.5")), watchValue("guest.net", nics("00:50:56:aa:bb:cc", "10.0.0.5")); a != b {
		t.Errorf("one NIC compared as %q and %q", a, b)
	}
	if a, b := watchValue("guest.net", nics("00:50:56:aa:bb:cc")), watchValue("guest.net", nics("00:50:56:aa:bb:cc", "10.0.0.5")); a == b {
		t.Errorf("an address that came is no change: %q", a)
	}
	status := extraConfigPath(keyStatus)
	if got := watchValue(status, types.OptionValue{Key: keyStatus, Value: `{"step":"join"}`}); got != `{"step":"join"}` {
		t.Errorf("report compared as %q", got)
	}
	if got := watchValue(extraConfigPath(keyUserDataEncoding), nil); got != "" {
		t.Errorf("a removed key compared as %q, want unset", got)
	}
	if got := watchValue("runtime.powerState", types.VirtualMachinePowerStatePoweredOn); got != "poweredOn" {
		t.Errorf("power compared as %q", got)
	}
	for _, p := range vmWatch.Paths {
		if !slices.Contains(vmProperties, p) {
			t.Errorf("the watch follows %s, which the VM read does not read", p)
		}
	}
}
