package machine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// observe chooses the backend, waits for the task in flight and reads the VM (nil: none). When
// stop is true the caller returns res and err as they are, except a NotOwned error, which is
// returned unhandled.
func (r *Reconciler) observe(ctx context.Context, s *hypervisor.Scope) (b hypervisor.Backend, vm *hypervisor.VM, stop bool, res ctrl.Result, err error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if b, err = r.Kind.Backend(ctx, s); err != nil {
		res, err = r.hypervisorError(obj, err)
		return nil, nil, true, res, err
	}
	s.Watched = watched(b)
	if st.Task != "" && !strings.HasPrefix(st.Task, "intent:") {
		if res, done, err := r.pollTask(ctx, s, b); !done || err != nil {
			return nil, nil, true, res, err
		}
	}
	r.countRead(st)
	if vm, err = b.Find(ctx, s); err != nil {
		if hypervisor.IsNotOwned(err) {
			return nil, nil, true, ctrl.Result{}, err // the caller decides: refuse, or leave it on delete
		}
		res, err = r.hypervisorError(obj, err)
		return nil, nil, true, res, err
	}
	s.GuestWatched = s.Watched || guestWatched(b, s)
	return b, vm, false, ctrl.Result{}, nil
}

// pollTask reads the task in status; done is true when it ended (or the hypervisor forgot it),
// and the caller goes on by looking at the VM itself.
func (r *Reconciler) pollTask(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend) (ctrl.Result, bool, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	t, err := b.Task(ctx, s, st.Task)
	if err != nil {
		res, err := r.hypervisorError(obj, err)
		return res, false, err
	}
	switch t.State {
	case hypervisor.TaskRunning:
		return ctrl.Result{RequeueAfter: r.taskWait(s)}, false, nil
	case hypervisor.TaskFailed:
		r.Recorder.Eventf(obj, nil, "Warning", "TaskFailed", "Task", "Task %s failed: %s", st.Task, t.Message)
		msg := "Task " + st.Task + " failed: " + t.Message
		st.Task = ""
		if st.Provisioning.State != infrav1.StateCloning {
			waiting(obj, infrav1.TaskFailedReason, msg)
			return ctrl.Result{RequeueAfter: r.PollInterval}, false, nil
		}
		// The create is tried again after a pause that grows with each failure in a row.
		st.Provisioning.State, st.Provisioning.Since = infrav1.StatePending, metav1.NewTime(r.now())
		st.Provisioning.Failures++
		wait := r.retryAfter(st)
		waiting(obj, infrav1.TaskFailedReason, fmt.Sprintf("%s (%d failed creates in a row; the next is sent in %s)", msg, st.Provisioning.Failures, wait))
		return ctrl.Result{RequeueAfter: wait}, false, nil
	}
	st.Task = ""
	if st.VM.ID == "" && t.VM.ID != "" {
		st.VM = t.VM
	}
	return ctrl.Result{}, true, nil
}

// blocked shows a credential the hypervisor refused, or a server backing off, and looks again
// without an error: the gate, not the controller's per-object backoff, paces the attempts. A
// refused credential is read again every CredentialRecheck (a Secret read, no login).
func (r *Reconciler) blocked(obj hypervisor.Object, b *logingate.Blocked) (ctrl.Result, error) {
	if b.Refused {
		waiting(obj, infrav1.AuthenticationFailedReason, b.Error())
		return ctrl.Result{RequeueAfter: r.CredentialRecheck}, nil
	}
	waiting(obj, infrav1.HypervisorErrorReason, b.Error())
	return ctrl.Result{RequeueAfter: max(b.RetryIn(r.now()), r.TaskPollInterval)}, nil
}

// taskWait is the wait before a running task is read again. A delete's second read comes one
// task poll interval after its task started (afterTask made the first, sooner); later ones grow
// with the state's age: long clones are not read every second (see taskPolls).
func (r *Reconciler) taskWait(s *hypervisor.Scope) time.Duration {
	ref := s.InfraMachine.GetMachineStatus().Task
	var started time.Time
	r.clock(s, func(c *stepClock) {
		if c.task == ref {
			started = c.taskAt
		}
	})
	now := r.now()
	if wait := started.Add(r.TaskPollInterval).Sub(now); !started.IsZero() && wait > 0 {
		return wait
	}
	first, most := taskPolls(s)
	age := now.Sub(s.InfraMachine.GetMachineStatus().Provisioning.Since.Time)
	return min(max(age/5, first*r.TaskPollInterval), most*r.TaskPollInterval)
}

// hypervisorError shows a backend error on VMProvisioned, with the action it failed in front of
// its cause. Terminal errors are looked at again only slowly (the user must change something);
// others are returned so the controller retries with backoff.
func (r *Reconciler) hypervisorError(obj hypervisor.Object, err error) (ctrl.Result, error) {
	var blocked *logingate.Blocked
	if errors.As(err, &blocked) {
		return r.blocked(obj, blocked)
	}
	reason := hypervisor.Reason(err)
	waiting(obj, reason, err.Error())
	var throttled *hypervisor.Throttled
	if errors.As(err, &throttled) {
		return ctrl.Result{RequeueAfter: r.TaskPollInterval}, nil
	}
	if _, terminal := hypervisor.AsError(err); terminal {
		r.Recorder.Eventf(obj, nil, "Warning", reason, "Reconcile", "%s", err.Error())
		return ctrl.Result{RequeueAfter: 10 * r.PollInterval}, nil
	}
	return ctrl.Result{}, err
}
