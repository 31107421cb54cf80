package vcenter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vmware/govmomi/fault"
	govguest "github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// CollectLogs runs the log collector in the guest through VMware Tools guest operations: it copies
// the collector in and starts it once (a collector of the same request already listed by Tools is
// not started again), and once that process has ended copies its zip out and deletes both files.
func (b *backend) CollectLogs(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM, id string) ([]byte, bool, error) {
	paths := guest.PathsOfCollect(id)
	ops := govguest.NewOperationsManager(b.sess.Client, vmRef(vm.Ref.ID))
	auth := authOf(s.GuestCredentials)
	pm, err := ops.ProcessManager(ctx)
	if err != nil {
		return nil, false, b.guestError("reach the guest's process manager", err, auth)
	}
	fm, err := ops.FileManager(ctx)
	if err != nil {
		return nil, false, b.guestError("reach the guest's file manager", err, auth)
	}
	procs, err := pm.ListProcesses(ctx, auth.login, nil)
	if err != nil {
		return nil, false, b.guestError("list the guest's processes", err, auth)
	}
	for _, p := range procs {
		if !strings.Contains(strings.ToLower(p.CmdLine), strings.ToLower(paths.Script)) {
			continue
		}
		if p.EndTime == nil {
			return nil, false, nil
		}
		if p.ExitCode != 0 {
			return nil, true, fmt.Errorf("the log collector %s ended with exit code %d", paths.Script, p.ExitCode)
		}
		zip, err := b.download(ctx, fm, auth, paths.Output)
		if err != nil {
			return nil, false, err
		}
		for _, f := range []string{paths.Output, paths.Script} {
			if err := fm.DeleteFile(ctx, auth.login, f); err != nil && !fault.Is(err, &types.FileNotFound{}) {
				return nil, false, b.guestError("delete "+f+" in the guest", err, auth)
			}
		}
		return zip, true, nil
	}
	script, err := guest.NewCollect(id).Script()
	if err != nil {
		return nil, false, err
	}
	if err := fm.MakeDirectory(ctx, auth.login, guest.GuestDir, true); err != nil && !fault.Is(err, &types.FileAlreadyExists{}) {
		return nil, false, b.guestError("create folder "+guest.GuestDir+" in the guest", err, auth)
	}
	if err := b.upload(ctx, fm, auth, paths.Script, script); err != nil {
		return nil, false, err
	}
	if _, err := pm.StartProgram(ctx, auth.login, &types.GuestProgramSpec{ProgramPath: guest.GuestPowerShell, Arguments: guest.CollectArgs(paths.Script)}); err != nil {
		return nil, false, b.guestError("start the log collector "+paths.Script, err, auth)
	}
	return nil, false, nil
}

// download reads one file out of the guest, through the VM's ESX host like upload.
func (b *backend) download(ctx context.Context, fm *govguest.FileManager, auth guestAuth, path string) ([]byte, error) {
	info, err := fm.InitiateFileTransferFromGuest(ctx, auth.login, path)
	if err != nil {
		return nil, b.guestError("start the copy of "+path+" out of the guest", err, auth)
	}
	if info.Size > guest.CollectMaxArchiveBytes*2 {
		return nil, fmt.Errorf("%s in the guest has %d bytes, more than a log archive may", path, info.Size)
	}
	u, err := fm.TransferURL(ctx, info.Url)
	if err != nil {
		return nil, callError(subject{action: "read the transfer URL of " + path, vm: b.machine.Name}, b.sess.Check(err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("copy %s out of the guest: %w", path, err)
	}
	res, err := b.sess.TransferClient(u.Host).Do(req)
	if err != nil {
		return nil, fmt.Errorf("copy %s out of the guest: %w", path, err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("copy %s out of the guest through ESX host %s: %s", path, u.Host, res.Status)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, info.Size+1))
	if err != nil {
		return nil, fmt.Errorf("copy %s out of the guest: %w", path, err)
	}
	if int64(len(data)) != info.Size {
		return nil, fmt.Errorf("copy %s out of the guest: read %d of %d bytes", path, len(data), info.Size)
	}
	return data, nil
}
