package vcenter_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/property"
	govsession "github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/metrics"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// watchManager starts a second manager for the watch-filter value filter whose guest and task
// polls are an hour long: only the vCenter watch can move its machines on. It returns the
// manager's wake-ups.
func watchManager(t *testing.T, filter string, sessions *session.Sessions) *machine.Wakes {
	t.Helper()
	g := NewWithT(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: manager.CacheOptions("", time.Minute), Client: manager.ClientOptions(),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	o := options(filter, sessions)
	o.PollInterval, o.TaskPollInterval = time.Hour, time.Hour
	o.Wakes = &machine.Wakes{}
	mctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() {
		cancel()
		sessions.Close(context.Background())
	})
	g.Expect(setup.Reconcilers(mctx, mgr, o)).To(Succeed())
	go func() { _ = mgr.Start(mctx) }()
	return o.Wakes
}

// deleteAndWait deletes the VCenterMachine and waits until it is gone; its VM must be gone too.
func (f *fixture) deleteAndWait(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	uid := string(f.get(g).UID)
	g.Expect(k8s.Delete(ctx, f.vm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(vmsWithUUID(g, vc(g), uid)).To(BeEmpty())
}

// TestWatchWakesMachines: with the guest and task polls an hour long, a VCenterMachine still
// goes from create to provisioned and is deleted: the ends of its tasks and the guest's address
// wake its reconcile. Without the watch it never gets past WaitingForAddresses (nothing in
// Kubernetes changes when the guest reports its address); whether it gets past the clone depends
// on whether the reconcile that follows the status write comes after the clone's 300 ms.
func TestWatchWakesMachines(t *testing.T) {
	g := NewWithT(t)
	watchCalls := &vcsimops.Calls{}
	wakes := watchManager(t, "watch", &session.Sessions{WrapTransport: vcsimops.Chain(watchCalls.Wrap, faults.wrap), WatchWait: time.Second})
	createdBefore, deletedBefore := reconcilesPerVM(g, "create"), reconcilesPerVM(g, "delete")
	exportedBefore, err := metrics.Value("capwin_vcenter_watch_wakeups_total", map[string]string{"result": "changed"})
	g.Expect(err).NotTo(HaveOccurred())
	f := newCluster(t, "watch")
	f.addMachine(t, "win-md-0-watch-"+randSuffix(), userData, defaultSpec())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	changed, nothing := wakes.Counts()
	g.Expect(changed+nothing).To(BeNumerically(">=", 1), "the ends of the clone, reconfigure and power-on tasks woke the machine")

	guestSets(g, vc(g), vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": "10.0.0.41"})
	m = f.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(m.Status.Addresses).NotTo(BeEmpty())
	created, _ := wakes.Counts()
	g.Expect(created).To(BeNumerically(">", changed), "the guest's address woke the machine")
	createCalls := watchCalls.Snapshot()

	// Provisioned, the machine waits minutes for its guest's bootstrap on Windows: its VM stays in
	// the watch, so the guest's report wakes it.
	guestSets(g, vc(g), vmRef(m.Status.VM.ID), map[string]string{"guestinfo.capwin.bootstrap.status": `{"step":"join","state":"Running"}`})
	g.Eventually(func() string { return f.get(g).Status.Bootstrap.Step }, 10*time.Second, 50*time.Millisecond).
		Should(Equal("join"), "the guest's report woke the provisioned machine")

	// Its Machine gets its Node (by hand: no guest joins here); the user data is cleared, and the
	// VM leaves the watch: a new report wakes nothing (the delete below follows it again, or it
	// would never end).
	cm := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), cm)).To(Succeed())
	before := cm.DeepCopy()
	cm.Status.NodeRef = clusterv1.MachineNodeReference{Name: "win-watch-node"}
	g.Expect(k8s.Status().Patch(ctx, cm, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func() bool { return extraConfig(readVM(g, vc(g), vmRef(m.Status.VM.ID)))["guestinfo.userdata"] == "" }, 10*time.Second, 50*time.Millisecond).
		Should(BeTrue(), "the user data is cleared once the Machine has its Node")
	time.Sleep(time.Second) // the wake of the clear's end
	created, createdNothing := wakes.Counts()
	guestSets(g, vc(g), vmRef(m.Status.VM.ID), map[string]string{"guestinfo.capwin.bootstrap.status": `{"step":"finish","state":"Succeeded"}`})
	g.Consistently(func() int {
		c, n := wakes.Counts()
		return c + n
	}, 2*time.Second, 100*time.Millisecond).Should(Equal(created+createdNothing), "a machine that has its Node is not followed")

	f.deleteAndWait(t)
	deleted, deletedNothing := wakes.Counts()
	exported, err := metrics.Value("capwin_vcenter_watch_wakeups_total", map[string]string{"result": "changed"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exported-exportedBefore).To(BeNumerically(">=", deleted), "the wake-ups are exported")
	t.Logf("woken reconciles: create %d changed + %d nothing, delete %d changed + %d nothing",
		created, createdNothing, deleted-created, deletedNothing-createdNothing)
	t.Logf("reconciles per VM: create %v, delete %v", reconcilesPerVM(g, "create")-createdBefore, reconcilesPerVM(g, "delete")-deletedBefore)
	t.Logf("vSphere calls to create: %v; with the delete: %v", createCalls, watchCalls.Snapshot())
}

// TestWatchAfterSessionEnds: vCenter ends the session of a watching manager (polls an hour
// long). The watch's next wait fails; a reconcile logs in again (the machine's, woken by the
// failing watch, or the VCenterCluster's), and the new session's watch, which took the old one's
// objects over, wakes the machine for the guest's address and its delete. Without a watch the
// machine stays WaitingForAddresses.
func TestWatchAfterSessionEnds(t *testing.T) {
	g := NewWithT(t)
	const agent = "capwin-watch-relogin-test"
	wakes := watchManager(t, "watchrelogin", &session.Sessions{WrapTransport: faults.wrap, UserAgent: agent, WatchWait: time.Second})
	f := newCluster(t, "watchrelogin")
	f.addMachine(t, "win-md-0-watchrelogin-"+randSuffix(), userData, defaultSpec())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)

	c := vc(g)
	ended := sessionsOf(g, c, agent)
	g.Expect(ended).NotTo(BeEmpty())
	g.Expect(govsession.NewManager(c).TerminateSession(ctx, ended)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(sessionsOf(g, c, agent)).To(HaveLen(1))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(sessionsOf(g, c, agent)).NotTo(ContainElements(ended))
	before, _ := wakes.Counts()

	guestSets(g, c, vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": "10.0.0.42"})
	f.waitReason(t, infrav1.ProvisionedReason)
	after, _ := wakes.Counts()
	g.Expect(after).To(BeNumerically(">", before), "the new session's watch woke the machine for the address")
	f.deleteAndWait(t)
}

// sessionsOf lists the keys of vcsim's sessions with the user agent.
func sessionsOf(g Gomega, c *vim25.Client, agent string) []string {
	var sm mo.SessionManager
	g.Expect(property.DefaultCollector(c).RetrieveOne(ctx, *c.ServiceContent.SessionManager, []string{"sessionList"}, &sm)).To(Succeed())
	var keys []string
	for _, us := range sm.SessionList {
		if us.UserAgent == agent {
			keys = append(keys, us.Key)
		}
	}
	return keys
}

// reconcilesPerVM is the sum of the vcentermachine reconciles-per-VM observations of a phase.
func reconcilesPerVM(g Gomega, phase string) float64 {
	samples, err := metrics.Samples("capwin_machine_reconciles_per_vm")
	g.Expect(err).NotTo(HaveOccurred())
	sum := 0.0
	for _, s := range samples {
		if s.Labels["kind"] == "vcentermachine" && s.Labels["phase"] == phase {
			sum += s.Sum
		}
	}
	return sum
}
