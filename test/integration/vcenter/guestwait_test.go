package vcenter_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// TestGuestWaitGrowsWithTheWait: a machine that waits for its guest is read again after the
// guest poll interval at first, and then less often the longer it waits, since a Windows guest
// takes minutes and every read is a hypervisor call: while the vCenter watch follows its VM
// (and wakes it on the guest's news) after as long as it has waited, at most a minute; without
// the watch after a quarter of that, at most 30 s, which bounds how late a report is seen.
// Before, every wait was the poll interval: 24 reads in a 4-minute bootstrap at the default 10 s.
func TestGuestWaitGrowsWithTheWait(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r, f, calls, m := runningVM(t, "guestwait", "win-md-0-guestwait-"+randSuffix())
	since := m.Status.Provisioning.Since.Time
	poll := r.PollInterval
	key := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)}
	for _, c := range []struct{ waited, want time.Duration }{
		{0, poll}, {10 * time.Second, 2500 * time.Millisecond}, {40 * time.Second, 10 * time.Second}, {4 * time.Minute, 30 * time.Second},
	} {
		r.Now = func() time.Time { return since.Add(c.waited) }
		before := calls.Snapshot()
		res, err := r.Reconcile(ctx, key)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.RequeueAfter).To(Equal(c.want), "no watch, waited %s", c.waited)
		g.Expect(calls.Snapshot()).NotTo(Equal(before), "the reconcile read the VM")
	}

	// The same machine, reconciled by a manager whose vCenter session watches its VM.
	wakes := &machine.Wakes{}
	sessions := &session.Sessions{WrapTransport: vcsimops.Chain((&vcsimops.Calls{}).Wrap, faults.wrap), Wake: wakes.Wake, WatchWait: time.Second}
	t.Cleanup(func() { sessions.Close(context.Background()) })
	w := manualReconcilerWith(g, "guestwait", sessions)
	w.Wakes = wakes
	for _, c := range []struct{ waited, want time.Duration }{
		{0, poll}, {10 * time.Second, 10 * time.Second}, {40 * time.Second, 40 * time.Second}, {4 * time.Minute, time.Minute},
	} {
		w.Now = func() time.Time { return since.Add(c.waited) }
		g.Eventually(func(g Gomega) time.Duration { // until the session's watch follows the VM
			res, err := w.Reconcile(ctx, key)
			g.Expect(err).NotTo(HaveOccurred())
			return res.RequeueAfter
		}, 10*time.Second, 100*time.Millisecond).Should(Equal(c.want), "watched, waited %s", c.waited)
	}
}
