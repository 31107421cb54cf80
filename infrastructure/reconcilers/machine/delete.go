package machine

import (
	"context"
	"fmt"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/ipam"
)

// defaultSoftTimeout is how long trySoft waits for the guest when the spec sets no timeout.
const defaultSoftTimeout = 5 * time.Minute

// reconcileDelete powers the VM off (by mode), destroys it, checks it is gone, releases the IP
// claims and only then drops the finalizer. A VM that is already gone is success.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *hypervisor.Scope, persist func() error) (ctrl.Result, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	r.setState(obj, infrav1.StateDeleting)
	waiting(obj, infrav1.DeletingReason, "Deleting the VM")
	if _, forget := obj.GetAnnotations()[infrav1.ForgetVMAnnotation]; forget {
		return ctrl.Result{}, r.forget(ctx, s, "VMForgotten", fmt.Sprintf("annotation %s", infrav1.ForgetVMAnnotation))
	}
	b, vm, stop, res, err := r.observe(ctx, s)
	if stop {
		if hypervisor.IsNotOwned(err) {
			// Not capwin's VM for this object: it is never deleted, whoever points at it.
			return ctrl.Result{}, r.forget(ctx, s, infrav1.VMNotOwnedReason, err.Error())
		}
		return res, err
	}
	if vm == nil {
		// A create sent just before a restart may still bring its VM: wait it out.
		if st.Task == intentCreate && r.now().Sub(st.Provisioning.Since.Time) < r.CreateGrace {
			return ctrl.Result{RequeueAfter: r.PollInterval}, nil
		}
		return ctrl.Result{}, r.deleted(ctx, obj)
	}
	st.VM = vm.Ref
	// A running VM that Destroy turns off itself skips the hard power-off; a suspended (saved,
	// paused) one is turned off first, as before.
	skipOff := vm.Power == hypervisor.PoweredOn && r.cutsPower(s, vm) && destroyStops(b)
	if vm.Power != hypervisor.PoweredOff && !skipOff {
		if res, err = r.powerOff(ctx, s, b, vm); err != nil || !r.settled(ctx, s, b) {
			return res, err
		}
		vm.Power = hypervisor.PoweredOff // the power-off task succeeded
	}
	ref, err := b.Destroy(ctx, s, vm)
	if err != nil {
		return r.hypervisorError(obj, err)
	}
	// A destroy without a task has finished; one with a task is waited for.
	if res = r.afterTask(s, ref); ref != "" && !r.settled(ctx, s, b) {
		return res, nil
	}
	// The destroy task succeeded: check that the VM is gone, as the next reconcile would.
	r.countRead(st)
	if vm, err = b.Find(ctx, s); err != nil || vm != nil {
		return ctrl.Result{RequeueAfter: r.TaskPollInterval / 5}, nil // the next reconcile looks again
	}
	return ctrl.Result{}, r.deleted(ctx, obj)
}

// deleted ends a delete whose VM is gone: the IP claims are released, the finalizer dropped.
func (r *Reconciler) deleted(ctx context.Context, obj hypervisor.Object) error {
	if err := ipam.ReleaseClaims(ctx, r.Client, obj); err != nil {
		return err // names the action and the machine
	}
	controllerutil.RemoveFinalizer(obj, r.Kind.Finalizer)
	r.Recorder.Eventf(obj, nil, "Normal", "Deleted", "Delete", "VM deleted")
	return nil
}

// settled waits up to Kind.DeleteTaskWait for the task the delete just started and reports
// whether it succeeded; the task is then done with (its slot freed, as pollTask does). A task
// still running, failed or unknown, or a read that failed, is left to the next reconcile's
// pollTask, which reports it. Reads back off from 10 ms, doubling.
func (r *Reconciler) settled(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend) bool {
	st := s.InfraMachine.GetMachineStatus()
	if r.Kind.DeleteTaskWait <= 0 || st.Task == "" || strings.HasPrefix(st.Task, "intent:") {
		return false
	}
	deadline := time.Now().Add(r.Kind.DeleteTaskWait)
	for wait := 10 * time.Millisecond; time.Now().Add(wait).Before(deadline); wait *= 2 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		t, err := b.Task(ctx, s, st.Task)
		if err != nil || t.State != hypervisor.TaskRunning {
			if err == nil && t.State == hypervisor.TaskSucceeded {
				st.Task = ""
				return true
			}
			return false
		}
	}
	return false
}

// forget drops the finalizer without deleting the VM (ForgetVMAnnotation, or a VM that is not
// the object's) and names the VM it leaves behind; why says what made it do so.
func (r *Reconciler) forget(ctx context.Context, s *hypervisor.Scope, reason, why string) error {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if err := ipam.ReleaseClaims(ctx, r.Client, obj); err != nil {
		return err // names the action and the machine
	}
	controllerutil.RemoveFinalizer(obj, r.Kind.Finalizer)
	vm := st.VM.ID
	if vm == "" {
		vm = "(none recorded)"
	}
	if st.VM.Host != "" {
		vm += " on host " + st.VM.Host
	}
	r.Recorder.Eventf(obj, nil, "Warning", reason, "Delete",
		"Finalizer removed without deleting the VM (%s): VM %s (providerID %q, instance UUID %q, addresses %v) is left behind if it still exists; remove it by hand",
		why, vm, *obj.GetProviderID(), st.VM.InstanceUUID, addressList(st))
	return nil
}

// cutsPower reports whether the delete turns the VM off hard: powerOffMode hard (the default), a
// suspended VM, or trySoft past its timeout (counted from the start of the delete) or without a
// guest agent to ask.
func (r *Reconciler) cutsPower(s *hypervisor.Scope, vm *hypervisor.VM) bool {
	mode := s.Spec.PowerOffMode
	timeout := defaultSoftTimeout
	if s.Spec.GuestSoftPowerOffTimeout != nil {
		timeout = s.Spec.GuestSoftPowerOffTimeout.Duration
	}
	expired := r.now().Sub(s.InfraMachine.GetMachineStatus().Provisioning.Since.Time) >= timeout
	return mode == infrav1.PowerOffHard || mode == "" || vm.Power == hypervisor.Suspended ||
		(mode == infrav1.PowerOffTrySoft && (expired || !vm.ToolsRunning))
}

// destroyStops reports whether b's Destroy turns a running VM off itself.
func destroyStops(b hypervisor.Backend) bool { return b.Capabilities().DestroyStops }

func addressList(st *infrav1.MachineStatus) []string {
	var out []string
	for _, a := range st.Addresses {
		out = append(out, a.Address)
	}
	return out
}

// powerOff stops a running VM: hard at once; soft asks the guest once and waits; trySoft asks
// and cuts the power after the timeout (counted from the start of the delete).
func (r *Reconciler) powerOff(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM) (ctrl.Result, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if !r.cutsPower(s, vm) {
		if st.Task != intentShutdown {
			if !vm.ToolsRunning {
				waiting(obj, infrav1.DeletingReason, "Waiting for the guest agent to accept a shutdown (powerOffMode soft)")
				return ctrl.Result{RequeueAfter: r.PollInterval}, nil
			}
			if _, err := b.PowerOff(ctx, s, vm, false); err != nil {
				return r.hypervisorError(obj, err)
			}
			st.Task = intentShutdown
		}
		waiting(obj, infrav1.DeletingReason, "Waiting for the guest to shut down")
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	}
	ref, err := b.PowerOff(ctx, s, vm, true)
	if err != nil {
		return r.hypervisorError(obj, err)
	}
	return r.afterTask(s, ref), nil
}
