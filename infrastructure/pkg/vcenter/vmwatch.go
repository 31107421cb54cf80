package vcenter

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// vmWatch is what the session's watch follows of a machine's VM: the properties whose change can
// move a machine on: power (the end of a power-on or power-off task, a guest shutdown), the
// guest's addresses, its tools (a soft shutdown waits for them), its bootstrap report, and the
// keys capwin's own reconfigure tasks write (metadata delivered, user data cleared, bootstrap
// started in the guest). The lifecycle reads them all in its one VM read (vmProperties).
var vmWatch = session.VMWatch{
	Paths: []string{"runtime.powerState", "guest.net", "guest.toolsRunningStatus",
		extraConfigPath(keyStatus), extraConfigPath(keyMetadataEncoding), extraConfigPath(keyUserDataEncoding), extraConfigPath(keyGuestRun)},
	Value: watchValue,
}

// watchValue is a watched property's value as the watch compares it: a guest NIC by its
// normalized MAC and its addresses, an extraConfig key by its value.
func watchValue(path string, val any) string {
	switch path {
	case "runtime.powerState", "guest.toolsRunningStatus":
		return fmt.Sprint(val)
	case "guest.net":
		var b strings.Builder
		if v, ok := val.(types.ArrayOfGuestNicInfo); ok {
			for _, n := range v.GuestNicInfo {
				fmt.Fprintf(&b, "%s=%s;", guest.NormalizeMAC(n.MacAddress), strings.Join(n.IpAddress, ","))
			}
		}
		return b.String()
	}
	return optionValue(val)
}
