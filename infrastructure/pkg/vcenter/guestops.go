package vcenter

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/fault"
	govguest "github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// keyGuestRun records, with the launcher's process id, that capwin started the bootstrap through
// guest operations. It is not a guestinfo key: the guest cannot set it.
const keyGuestRun = "capwin.bootstrap.started"

// RunInGuest copies the launcher and the bootstrap script into the guest with VMware Tools guest
// operations, starts the launcher once and records its process id on the VM.
func (b *backend) RunInGuest(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	pid, err := b.launch(ctx, s, vm)
	if err != nil {
		return "", callError(b.onVM("start the bootstrap script in the guest of", vm.Ref.ID), err)
	}
	return b.reconfigure(ctx, b.onVM("record the start of the bootstrap script on", vm.Ref.ID), vm,
		[]types.BaseOptionValue{&types.OptionValue{Key: keyGuestRun, Value: "pid=" + strconv.FormatInt(pid, 10)}})
}

// launch starts the launcher in the guest, or finds the one started before, and returns its
// process id.
func (b *backend) launch(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (int64, error) {
	launch, err := guest.NewLaunch(s.ComputerName, guest.WithMACs(s.NICs, vm.MACs), guest.LaunchStatus{GuestinfoKey: keyStatus})
	if err != nil {
		return 0, hypervisor.Errorf(infrav1.InvalidSpecReason, "launcher: %v", err)
	}
	script, err := launch.Script()
	if err != nil {
		return 0, fmt.Errorf("render the launcher: %w", err)
	}
	ops := govguest.NewOperationsManager(b.sess.Client, vmRef(vm.Ref.ID))
	auth := authOf(s.GuestCredentials)
	pm, err := ops.ProcessManager(ctx)
	if err != nil {
		return 0, b.guestError("reach the guest's process manager", err, auth)
	}
	// A launcher started by a manager that stopped before recording it is still listed (Tools
	// keeps finished processes for a few minutes): record that one instead of starting another.
	pid, err := b.startedLauncher(ctx, pm, auth)
	if err != nil || pid != 0 {
		return pid, err
	}
	return b.startLauncher(ctx, ops, pm, auth, s.UserData, script)
}

// startedLauncher returns the process id of a launcher running or recently finished in the guest.
func (b *backend) startedLauncher(ctx context.Context, pm *govguest.ProcessManager, auth guestAuth) (int64, error) {
	procs, err := pm.ListProcesses(ctx, auth.login, nil)
	if err != nil {
		return 0, b.guestError("list the guest's processes", err, auth)
	}
	for _, p := range procs {
		if strings.Contains(strings.ToLower(p.CmdLine), strings.ToLower(guest.GuestLaunchPath)) {
			return p.Pid, nil
		}
	}
	return 0, nil
}

func (b *backend) startLauncher(ctx context.Context, ops *govguest.OperationsManager, pm *govguest.ProcessManager,
	auth guestAuth, bootstrap, launcher []byte) (int64, error) {
	fm, err := ops.FileManager(ctx)
	if err != nil {
		return 0, b.guestError("reach the guest's file manager", err, auth)
	}
	if err := fm.MakeDirectory(ctx, auth.login, guest.GuestDir, true); err != nil && !fault.Is(err, &types.FileAlreadyExists{}) {
		return 0, b.guestError("create folder "+guest.GuestDir+" in the guest", err, auth)
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{guest.GuestBootstrapPath, bootstrap}, {guest.GuestLaunchPath, launcher}} {
		if err := b.upload(ctx, fm, auth, f.path, f.data); err != nil {
			return 0, err
		}
	}
	pid, err := pm.StartProgram(ctx, auth.login, &types.GuestProgramSpec{ProgramPath: guest.GuestPowerShell, Arguments: guest.GuestLaunchArgs})
	if err != nil {
		return 0, b.guestError("start the launcher "+guest.GuestLaunchPath, err, auth)
	}
	return pid, nil
}

// upload writes one file into the guest. The transfer goes to the VM's ESX host, which is trusted
// by the certificate thumbprint vCenter reports for it.
func (b *backend) upload(ctx context.Context, fm *govguest.FileManager, auth guestAuth, path string, data []byte) error {
	raw, err := fm.InitiateFileTransferToGuest(ctx, auth.login, path, &types.GuestWindowsFileAttributes{}, int64(len(data)), true)
	if err != nil {
		return b.guestError("start the copy of "+path+" into the guest", err, auth)
	}
	u, err := fm.TransferURL(ctx, raw)
	if err != nil {
		return callError(subject{action: "read the transfer URL of " + path, vm: b.machine.Name}, b.sess.Check(err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("copy %s into the guest: %w", path, err)
	}
	req.ContentLength = int64(len(data))
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := b.sess.TransferClient(u.Host).Do(req)
	if err != nil {
		return fmt.Errorf("copy %s into the guest: %w", path, err) // names the ESX host
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("copy %s into the guest through ESX host %s: %s", path, u.Host, res.Status)
	}
	return nil
}

// guestAuth is a guest login and where it comes from, for the message of a refusal.
type guestAuth struct {
	login  *types.NamePasswordAuthentication
	source string
}

func authOf(c *hypervisor.GuestCredentials) guestAuth {
	source := c.Source
	if source == "" {
		source = "spec.guestCredentialsRef"
	}
	return guestAuth{login: &types.NamePasswordAuthentication{Username: c.Username, Password: c.Password}, source: source}
}

// guestError turns a refused guest login into a terminal error (retrying soon could lock the
// account out); anything else is retried, with the guest operation's action in front.
func (b *backend) guestError(action string, err error, auth guestAuth) error {
	if fault.Is(err, &types.InvalidGuestLogin{}) {
		return hypervisor.Errorf(infrav1.GuestScriptNotStartedReason,
			"the guest refused the login of user %q from %s: check the Secret", auth.login.Username, auth.source)
	}
	return callError(subject{action: action, vm: b.machine.Name}, b.sess.Check(err))
}
