package vcenter_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/property"
	govsession "github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25/mo"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/setup"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// manualReconciler is a VCenterMachine reconciler that is not run by a manager: the test calls
// Reconcile itself, as a manager (re)started at that moment would. It reads the API server
// directly and has its own vCenter sessions, like a new process.
func manualReconciler(g Gomega, filter string, c *vcsimops.Calls) *machine.Reconciler {
	return manualReconcilerWith(g, filter, &session.Sessions{WrapTransport: vcsimops.Chain(c.Wrap, faults.wrap)})
}

// manualReconcilerWith is a manualReconciler with its own vCenter session cache.
func manualReconcilerWith(g Gomega, filter string, sessions *session.Sessions) *machine.Reconciler {
	direct, err := client.New(env.Config, client.Options{Scheme: setup.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	provider := &vcenter.Provider{Client: direct, Sessions: sessions}
	r := setup.NewVCenterMachineReconciler(direct, direct, nil, provider, options(filter, nil))
	r.Recorder = events.NewFakeRecorder(100)
	r.Default()
	return r
}

func reconcileUntil(t *testing.T, r *machine.Reconciler, f *fixture, done func(*infrav1.VCenterMachine) bool) *infrav1.VCenterMachine {
	t.Helper()
	var m *infrav1.VCenterMachine
	NewWithT(t).Eventually(func(g Gomega) bool {
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
		g.Expect(err).NotTo(HaveOccurred())
		// Read what the reconcile wrote, not the test manager's cache, which may lag behind it.
		m = &infrav1.VCenterMachine{}
		g.Expect(r.Client.Get(ctx, client.ObjectKeyFromObject(f.vm), m)).To(Succeed())
		return done(m)
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	return m
}

// TestRestartMidClone stops a manager right after it sent the clone and before it could record
// the task (status keeps only the create intent), then lets a new manager take over while the
// clone is still running: there must be exactly one VM, adopted, not cloned again.
func TestRestartMidClone(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, "restart")
	f.addMachine(t, "win-md-0-restart-"+randSuffix(), userData, defaultSpec())
	c := vc(g)

	// The running manager watches only its own watch-filter value: it leaves this machine alone.
	g.Consistently(func(g Gomega) {
		g.Expect(f.get(g).Finalizers).To(BeEmpty())
	}, time.Second, 100*time.Millisecond).Should(Succeed())

	first := manualReconciler(g, "restart", nil)
	m := reconcileUntil(t, first, f, func(m *infrav1.VCenterMachine) bool { return strings.HasPrefix(m.Status.Task, "task-") })
	g.Expect(m.Status.Task).To(HavePrefix("task-"))
	// The status write that recorded the task is lost with the process.
	g.Eventually(func(g Gomega) {
		m := f.get(g)
		m.Status.Task = "intent:create"
		g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	secondCalls := &vcsimops.Calls{}
	second := manualReconciler(g, "restart", secondCalls)
	m = reconcileUntil(t, second, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
	g.Expect(m.Status.VM.InstanceUUID).To(Equal(string(m.UID)))
	g.Expect(m.Status.Task).To(BeEmpty())
	g.Expect(secondCalls.Snapshot()).NotTo(HaveKey("CloneVM_Task"))

	// Reconciling again and again changes nothing in vCenter.
	before := secondCalls.Snapshot()
	for range 5 {
		_, err := second.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
	after := secondCalls.Snapshot()
	for _, mutating := range []string{"CloneVM_Task", "PowerOnVM_Task", "ReconfigVM_Task", "Destroy_Task"} {
		g.Expect(after[mutating]).To(Equal(before[mutating]), mutating)
	}

	// A restart with the task recorded polls it instead of cloning.
	g.Expect(k8s.Delete(ctx, f.vm)).To(Succeed())
	third := manualReconciler(g, "restart", nil)
	NewWithT(t).Eventually(func(g Gomega) {
		_, err := third.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(vmsWithUUID(g, c, string(m.UID))).To(BeEmpty())
		g.Expect(client.IgnoreNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{}))).To(Succeed())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestSessionEndsMidClone: vCenter ends the manager's session while a clone runs. The next poll
// logs in again and goes on with the same task; nothing fails and nothing is cloned twice.
func TestSessionEndsMidClone(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, "relogin")
	name := "win-md-0-relogin-" + randSuffix()
	f.addMachine(t, name, userData, defaultSpec())
	const agent = "capwin-relogin-test"
	r := manualReconcilerWith(g, "relogin", &session.Sessions{WrapTransport: faults.wrap, UserAgent: agent})
	m := reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool { return strings.HasPrefix(m.Status.Task, "task-") })
	task := m.Status.Task

	c := vc(g)
	var sm mo.SessionManager
	g.Expect(property.DefaultCollector(c).RetrieveOne(ctx, *c.ServiceContent.SessionManager, []string{"sessionList"}, &sm)).To(Succeed())
	var ended []string
	for _, us := range sm.SessionList {
		if us.UserAgent == agent {
			ended = append(ended, us.Key)
		}
	}
	g.Expect(ended).NotTo(BeEmpty())
	g.Expect(govsession.NewManager(c).TerminateSession(ctx, ended)).To(Succeed())

	_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
	g.Expect(err).NotTo(HaveOccurred())
	m = f.get(g)
	g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Reason).NotTo(Equal(infrav1.HypervisorErrorReason))
	if m.Status.Task != task { // the clone ended: its VM is known, and the next step may have begun
		g.Expect(m.Status.VM.InstanceUUID).To(Equal(string(m.UID)))
	}
	m = reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	g.Expect(faults.clones(name)).To(HaveLen(1))
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
}
