package machine

import (
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// maxGuestWait is the longest a machine that waits for its guest goes unread while a watch
// wakes it on the guest's news; without a watch, half of it bounds how late a report is seen.
const maxGuestWait = time.Minute

// guestWait is how long a machine that waits for its guest (addresses, bootstrap, Node) is left
// before its VM is read again. A Windows guest takes minutes and every read is a hypervisor call,
// so the wait grows with the time waited in the machine's current state:
//   - while a healthy watch follows the VM (vCenter's property collector, or the Hyper-V host's
//     guest watch, wakes the machine when its VM's addresses or the guest's bootstrap report
//     change), a read is only a safety net: as long as the machine has waited so far, so the
//     interval doubles, up to maxGuestWait;
//   - without one (--no-vcenter-watch, --hyperv-guest-watch-interval=0, or a watch that is not
//     healthy), a read is how a report is seen: a quarter of the time waited, up to
//     maxGuestWait/2, which bounds how late a report shows.
//
// It is never shorter than the guest poll interval. A Node that joins wakes the machine either
// way (the workload cluster's Node watch).
func (r *Reconciler) guestWait(s *hypervisor.Scope) time.Duration {
	waited := r.now().Sub(s.InfraMachine.GetMachineStatus().Provisioning.Since.Time)
	wait, most := waited, maxGuestWait
	if !s.GuestWatched {
		wait, most = waited/4, maxGuestWait/2
	}
	return max(r.PollInterval, min(wait, most))
}
