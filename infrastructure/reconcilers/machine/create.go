package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// create starts the VM, unless it was already provisioned once (a VM that vanished is not
// re-created: the Machine is replaced by CAPI instead) or a create may still be in flight.
func (r *Reconciler) create(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, persist func() error) (ctrl.Result, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if ptr.Deref(st.Initialization.Provisioned, false) || st.VM.InstanceUUID != "" {
		waiting(obj, infrav1.VMMissingReason, fmt.Sprintf("VM %s is gone from the hypervisor; delete the Machine to replace it", st.VM.ID))
		return ctrl.Result{}, nil
	}
	if st.Task == intentCreate {
		if wait := st.Provisioning.Since.Add(r.CreateGrace).Sub(r.now()); wait > 0 {
			waiting(obj, infrav1.CloningReason, "A create was sent but its answer was lost; waiting for its VM")
			return ctrl.Result{RequeueAfter: min(wait, r.PollInterval)}, nil
		}
	} else if wait := st.Provisioning.Since.Add(r.retryAfter(st)).Sub(r.now()); wait > 0 {
		// The TaskFailed condition stays: it says why the clone is tried again later.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	// The bootstrap data is read only here: a VM that exists never needs it again.
	var err error
	if s.UserData, s.Format, err = r.bootstrapData(ctx, s); err != nil {
		waiting(obj, infrav1.WaitingForBootstrapDataReason, err.Error())
		return ctrl.Result{}, err
	}
	if s.UserData == nil {
		waiting(obj, infrav1.WaitingForBootstrapDataReason, "Waiting for the bootstrap data Secret")
		return ctrl.Result{}, nil
	}
	if s.RunsInGuest() {
		if s.Format != FormatPowerShell {
			return r.hypervisorError(obj, hypervisor.Errorf(infrav1.InvalidSpecReason, "%s", formatMessage(s.Format)))
		}
		// Started through the guest agent once the VM runs: never stored in the VM config.
		s.UserData = nil
	}
	s.CreateMayRun = st.Task == intentCreate
	in := &intent{r: r, ctx: ctx, obj: obj, persist: persist}
	ref, err := b.Create(ctx, s, in)
	if err != nil {
		return r.createFailed(obj, err, in.committed, s.CreateMayRun)
	}
	r.observeCreate(s)
	waiting(obj, infrav1.CloningReason, "Creating the VM from template")
	r.Recorder.Eventf(obj, nil, "Normal", "Creating", "Create", "Creating VM (task %s)", ref)
	return r.afterTask(s, ref), nil
}

// checkLive reads the machine from the API server before a write-ahead (the cache may lag behind
// a create this controller already sent, or a host it recorded): a lost create past its grace
// period is retried, anything else in flight is not, and a host recorded meanwhile is not replaced.
func (r *Reconciler) checkLive(ctx context.Context, obj hypervisor.Object) error {
	live := r.Kind.NewObject()
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return fmt.Errorf("read the machine's status.task from the API server: %w", err)
	}
	st, now := obj.GetMachineStatus(), live.GetMachineStatus()
	if t := now.Task; t != "" && (t != intentCreate || st.Task != intentCreate) {
		return fmt.Errorf("status.task is %q on the API server: a create is already under way", t)
	}
	if now.VM.Host != st.VM.Host {
		return fmt.Errorf("status.vm.host is %q on the API server, not %q as read: placed again on the next reconcile", now.VM.Host, st.VM.Host)
	}
	return nil
}

// createFailed shows a create that did not start. One that may be under way keeps its intent, so
// no second VM is created while the first may still come: its VM is looked for until the grace
// period is over, and then a create still running is. A create the hypervisor refused, or one
// stopped before its call, is tried again; an earlier create that may be under way (earlier)
// keeps its intent whatever a later attempt met before its call.
func (r *Reconciler) createFailed(obj hypervisor.Object, err error, committed, earlier bool) (ctrl.Result, error) {
	st := obj.GetMachineStatus()
	var pending *hypervisor.CreatePending
	switch {
	case errors.As(err, &pending) && committed:
		waiting(obj, infrav1.HypervisorErrorReason, fmt.Sprintf(
			"%v; the create may have reached the hypervisor: its VM is looked for for %s before another is sent", err, r.CreateGrace))
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	case errors.As(err, &pending):
		waiting(obj, infrav1.CloningReason, err.Error())
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	case committed || !earlier:
		st.Task = ""
		r.setState(obj, infrav1.StatePending)
	}
	return r.hypervisorError(obj, err)
}

// retryAfter is how long after a failed create task the next create waits: PollInterval doubled
// per failure in a row, at most 30 PollIntervals (10s to 5m by default). It is counted from
// status, so a restarted manager keeps it.
func (r *Reconciler) retryAfter(st *infrav1.MachineStatus) time.Duration {
	if st.Provisioning.Failures <= 0 {
		return 0
	}
	return min(r.PollInterval<<min(st.Provisioning.Failures-1, 5), 30*r.PollInterval)
}
