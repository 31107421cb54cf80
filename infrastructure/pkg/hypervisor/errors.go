package hypervisor

import (
	"errors"
	"fmt"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// Error is a backend failure the user must fix; Reason is a VMProvisioned reason
// (InvalidSpec, BootstrapDataTooLarge ...). The reconciler shows it and does not retry until
// the object changes.
type Error struct {
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns a terminal *Error.
func Errorf(reason, format string, args ...any) error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// CreatePending is Create's error for a create that may be under way in the hypervisor: the
// request may have reached it although no answer came back (a reset or timed-out connection), or
// an earlier create may still be running. The reconciler keeps the create intent and looks for
// the VM before any new create; a backend returns a plain error only when the hypervisor
// certainly started nothing.
type CreatePending struct {
	Err error
}

func (e *CreatePending) Error() string { return e.Err.Error() }
func (e *CreatePending) Unwrap() error { return e.Err }

// NotOwned is Find's error for a VM that exists but was not created for this object: capwin
// neither adopts nor deletes it.
func NotOwned(format string, args ...any) error {
	return Errorf(infrav1.VMNotOwnedReason, format, args...)
}

// IsNotOwned reports whether err is NotOwned's.
func IsNotOwned(err error) bool {
	e, ok := AsError(err)
	return ok && e.Reason == infrav1.VMNotOwnedReason
}

// AsError unwraps a terminal *Error.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Reason is the VMProvisioned reason of a backend error: WaitingForTaskSlot for Throttled, the
// reason of a terminal *Error, HypervisorError for anything else (the reconciler retries it).
// Wrapping does not change it. The login gate's errors are judged by the reconciler itself.
func Reason(err error) string {
	var throttled *Throttled
	if errors.As(err, &throttled) {
		return infrav1.WaitingForTaskSlotReason
	}
	if e, ok := AsError(err); ok {
		return e.Reason
	}
	return infrav1.HypervisorErrorReason
}

// Throttled is a backend's error for a task it did not start because the hypervisor already runs
// as many of this manager's tasks as it may (--vcenter-max-tasks). Nothing was sent. The
// reconcile does not wait for a slot (that would hold a worker): VMProvisioned says
// WaitingForTaskSlot and the machine is looked at again after a short wait, without the
// controller's error backoff.
type Throttled struct {
	Message string
}

func (e *Throttled) Error() string { return e.Message }
