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

// RunInGuest copies the launcher and the bootstrap script into the guest with PowerShell Direct
// and starts the launcher once; guest.ps1 records its process id in the VM's notes.
func (b *backend) RunInGuest(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	err := b.runInGuest(ctx, s, vm)
	if KindOf(err) == wire.KindGuestFailed {
		return "", hypervisor.Errorf(infrav1.GuestScriptNotStartedReason, "%s", err.Error())
	}
	return "", doing("start the bootstrap script in VM "+vm.Ref.ID, err)
}

func (b *backend) runInGuest(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) error {
	launch, err := guest.NewLaunch(s.ComputerName, guest.WithMACs(s.NICs, vm.MACs), guest.LaunchStatus{KVPKey: guest.KVPKey, KVPValue: wire.StatusKVPValue})
	if err != nil {
		return hypervisor.Errorf(infrav1.InvalidSpecReason, "launcher: %v", err)
	}
	script, err := launch.Script()
	if err != nil {
		return fmt.Errorf("render the launcher: %w", err)
	}
	c, err := b.conn(vm.Ref.Host)
	if err != nil {
		return err
	}
	in := wire.GuestInput{ID: vm.Ref.ID, Username: s.GuestCredentials.Username, Password: s.GuestCredentials.Password,
		Directory: guest.GuestDir, LaunchPath: guest.GuestLaunchPath, CommandLine: `"` + guest.GuestPowerShell + `" ` + guest.GuestLaunchArgs,
		Files: []wire.GuestFile{
			{Path: guest.GuestBootstrapPath, Data: base64.StdEncoding.EncodeToString(s.UserData)},
			{Path: guest.GuestLaunchPath, Data: base64.StdEncoding.EncodeToString(script)},
		}}
	return c.Run(ctx, wire.OpGuest, in, nil)
}
