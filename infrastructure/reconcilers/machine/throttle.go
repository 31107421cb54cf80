package machine

// Throttled is a backend's error for a task it did not start because the hypervisor already runs
// as many of this manager's tasks as it may (--vcenter-max-tasks). Nothing was sent. The
// reconcile does not wait for a slot (that would hold a worker): VMProvisioned says
// WaitingForTaskSlot and the machine is looked at again after a short wait, without the
// controller's error backoff.
type Throttled struct {
	Message string
}

func (e *Throttled) Error() string { return e.Message }
