package hyperv

import (
	"context"
	"encoding/base64"
	"fmt"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// CollectLogs runs the log collector in the guest with PowerShell Direct, to its end, in one
// operation (guestlogs.ps1), and returns its zip.
func (b *backend) CollectLogs(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM, id string) ([]byte, bool, error) {
	paths := guest.PathsOfCollect(id)
	script, err := guest.NewCollect(id).Script()
	if err != nil {
		return nil, false, err
	}
	c, err := b.conn(vm.Ref.Host)
	if err != nil {
		return nil, false, err
	}
	in := wire.GuestLogsInput{ID: vm.Ref.ID, Username: s.GuestCredentials.Username, Password: s.GuestCredentials.Password,
		Directory: guest.GuestDir, ScriptPath: paths.Script, Script: base64.StdEncoding.EncodeToString(script),
		PowerShell: guest.GuestPowerShell, Arguments: guest.CollectArgs(paths.Script), Output: paths.Output,
		MaxBytes: guest.CollectMaxArchiveBytes * 2}
	var out wire.GuestLogs
	if err := c.Run(ctx, wire.OpGuestLogs, in, &out); err != nil {
		if KindOf(err) == wire.KindGuestFailed {
			return nil, true, hypervisor.Errorf(infrav1.GuestScriptNotStartedReason, "%s", err.Error())
		}
		return nil, false, doing("collect the logs of VM "+vm.Ref.ID, err)
	}
	zip, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil {
		return nil, true, fmt.Errorf("the log archive of VM %s: %w", vm.Ref.ID, err)
	}
	return zip, true, nil
}
