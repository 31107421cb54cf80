package machine_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
)

// TestGuestWaitGrowsWithTheWait: a machine that waits for its guest is read again after the
// guest poll interval at first, and then less often the longer it waits, since a Windows guest
// takes minutes and every read is a hypervisor call: with the vCenter watch (which wakes it on
// the guest's news) after as long as it has waited, at most a minute; without the watch after a
// quarter of that, at most 30 s, which bounds how late a report is seen. Before, every wait was
// the poll interval: 24 reads in a 4-minute bootstrap at the default 10 s, 240 at 1 s.
func TestGuestWaitGrowsWithTheWait(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r, f, calls, m := runningVM(t, "guestwait", "win-md-0-guestwait-"+randSuffix())
	since := m.Status.Provisioning.Since.Time
	poll := r.PollInterval
	for _, c := range []struct {
		waited time.Duration
		watch  bool
		want   time.Duration
	}{
		{0, true, poll},
		{0, false, poll},
		{10 * time.Second, true, 10 * time.Second},
		{10 * time.Second, false, 2500 * time.Millisecond},
		{40 * time.Second, true, 40 * time.Second},
		{40 * time.Second, false, 10 * time.Second},
		{4 * time.Minute, true, time.Minute},
		{4 * time.Minute, false, 30 * time.Second},
	} {
		r.Now = func() time.Time { return since.Add(c.waited) }
		r.Wakes = nil
		if c.watch {
			r.Wakes = &machine.Wakes{}
		}
		before := calls.Snapshot()
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.RequeueAfter).To(Equal(c.want), "waited %s, watch %t", c.waited, c.watch)
		g.Expect(calls.Snapshot()).NotTo(Equal(before), "the reconcile read the VM")
	}
}
