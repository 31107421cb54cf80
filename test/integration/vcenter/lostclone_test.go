package vcenter_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
)

// TestLostCreateRetried: a create intent whose VM never appeared (the manager stopped before the
// clone was sent) is retried once the grace period is over.
func TestLostCreateRetried(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, "lost")
	f.addMachine(t, "win-md-0-lost-"+randSuffix(), userData, defaultSpec())
	r := manualReconciler(g, "lost", nil)
	r.CreateGrace = 200 * time.Millisecond
	reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool { return len(m.Finalizers) > 0 })
	g.Eventually(func(g Gomega) {
		m := f.get(g)
		m.Status.Task = "intent:create"
		m.Status.Provisioning = infrav1.Provisioning{State: infrav1.StateCloning, Since: metav1.Now()}
		g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	m := reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	g.Expect(vmsWithUUID(g, vc(g), string(m.UID))).To(HaveLen(1))
}

// TestLostCloneAnswer: vCenter starts the clone, but its answer is lost (the connection resets
// after the request was sent). The create intent stays and the clone's VM is adopted when it
// shows up: one clone request, one VM, and the machine gets Ready.
func TestLostCloneAnswer(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	name := "win-md-0-lostanswer-" + randSuffix()
	faults.lose(name, 1)
	f.addMachine(t, name, userData, defaultSpec())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	c := vc(g)
	guestSets(g, c, vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": "10.0.0.32"})
	m = f.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(faults.clones(name)).To(HaveLen(1), "clone requests sent")
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
}

// TestLostCloneAnswerGraceOver: as TestLostCloneAnswer, with the grace period over at once: the
// clone still running in vCenter, not the grace period, holds the next create back.
func TestLostCloneAnswerGraceOver(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, name, r := lostCloneMachine(t, "lostanswer")
	keptIntent := false
	m := reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
		lost := strings.Contains(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message, "connection reset")
		keptIntent = keptIntent || (lost && m.Status.Task == "intent:create")
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	g.Expect(faults.clones(name)).To(HaveLen(1), "clone requests sent")
	g.Expect(vmsWithUUID(g, vc(g), string(m.UID))).To(HaveLen(1))
	g.Expect(keptIntent).To(BeTrue(), "the create may be under way: its intent stays")
}

// TestLostCloneEndsAfterLookup: the clone whose answer was lost ends between the lookup of its VM
// by instance UUID and the look at the template's running clones. Neither sees it any more, yet
// its VM is there: it is adopted, and no second clone is sent (CI once sent one).
func TestLostCloneEndsAfterLookup(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, name, r := lostCloneMachine(t, "lostended")
	m := reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Task == "intent:create" && len(faults.clones(name)) == 1
	})
	c := vc(g)
	g.Eventually(func(g Gomega) {
		g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// The next lookup misses the VM, as one made just before the clone ended does.
	faults.hide(string(m.UID), 1)
	m = reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	g.Expect(faults.hidden(string(m.UID))).To(BeZero(), "the lookup was made and missed")
	g.Expect(faults.clones(name)).To(HaveLen(1), "clone requests sent")
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
}

// lostCloneMachine adds a machine whose first clone answer is lost, and a reconciler of its own
// (watch-filter value filter) whose create grace period is over at once.
func lostCloneMachine(t *testing.T, filter string) (*fixture, string, *machine.Reconciler) {
	f := newCluster(t, filter)
	name := "win-md-0-" + filter + "-" + randSuffix()
	faults.lose(name, 1)
	f.addMachine(t, name, userData, defaultSpec())
	r := manualReconciler(NewWithT(t), filter, nil)
	r.CreateGrace = time.Millisecond
	return f, name, r
}
