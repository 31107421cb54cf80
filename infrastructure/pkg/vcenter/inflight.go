package vcenter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// clockSkew is how far vCenter's clock may be ahead of or behind the manager's.
const clockSkew = 2 * time.Minute

// maybeSent reports whether a failed call may have reached vCenter: anything but a fault vCenter
// answered with (it started nothing then) or a connection that was never opened.
func maybeSent(err error) bool {
	if soap.IsSoapFault(err) || soap.IsVimFault(err) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}

// noCloneRunning returns a *hypervisor.CreatePending while a clone of the template queued since the
// object's create intent (less the clock skew) is still running: it may be the create whose
// answer was lost. vCenter does not tell which VM a running clone makes, so any such clone is
// waited for; each ends, and then the VM, if it was this one's, is found by its instance UUID.
// That lookup is made again here, after the tasks: a clone that ended between Find and this
// check is gone from the running tasks, and its VM is there now.
func (b *backend) noCloneRunning(ctx context.Context, s *hypervisor.Scope, template types.ManagedObjectReference) error {
	if err := b.clonesEnded(ctx, s, template); err != nil {
		return err
	}
	uid := string(s.InfraMachine.GetUID())
	ref, err := object.NewSearchIndex(b.sess.Client).FindByUuid(ctx, b.dc, uid, true, ptr.To(true))
	if err != nil {
		return callError(b.on("look up the VM with instance UUID "+uid), b.sess.Check(err))
	}
	if ref != nil {
		return &hypervisor.CreatePending{Err: fmt.Errorf(
			"VM %s with instance UUID %s appeared: the create whose answer was lost ended; adopting it", ref.Reference().Value, uid)}
	}
	return nil
}

// clonesEnded returns a *hypervisor.CreatePending while a clone of the template queued since the
// create intent is running.
func (b *backend) clonesEnded(ctx context.Context, s *hypervisor.Scope, template types.ManagedObjectReference) error {
	pc := property.DefaultCollector(b.sess.Client)
	var tmpl mo.VirtualMachine
	if err := pc.RetrieveOne(ctx, template, []string{"recentTask"}, &tmpl); err != nil {
		return callError(b.on("read the recent tasks of template "+b.where.Template), b.sess.Check(err))
	}
	if len(tmpl.RecentTask) == 0 {
		return nil
	}
	var tasks []mo.Task
	if err := pc.Retrieve(ctx, tmpl.RecentTask, []string{"info"}, &tasks); err != nil {
		return callError(b.on("read the recent tasks of template "+b.where.Template), b.sess.Check(err))
	}
	since := s.InfraMachine.GetMachineStatus().Provisioning.Since.Add(-clockSkew)
	for _, t := range tasks {
		i := t.Info
		running := i.State == types.TaskInfoStateQueued || i.State == types.TaskInfoStateRunning
		// vCenter names it VirtualMachine.clone, vcsim VirtualMachine.cloneVm.
		if running && strings.HasPrefix(i.DescriptionId, "VirtualMachine.clone") && i.QueueTime.After(since) {
			return &hypervisor.CreatePending{Err: fmt.Errorf(
				"clone task %s of the template, queued at %s, may be this machine's create whose answer was lost: waiting for it to end",
				i.Key, i.QueueTime.UTC().Format(time.RFC3339))}
		}
	}
	return nil
}
