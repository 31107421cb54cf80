package vcenter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/reconcilers/vcentercluster"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/test/framework/apicount"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// scaleFilter is the watch-filter value of the machines of TestSteadyStateRequests: no running
// manager reconciles them, the test does.
const scaleFilter = "scale"

// TestSteadyStateRequests counts the management-cluster requests of reconciles of provisioned
// machines waiting for their Node, wired as in production (manager cache and client settings,
// the login Secret cache), for 5 and for 50 machines: a reconcile must cost the same whatever
// the number of machines, and read no Secret from the API server.
func TestSteadyStateRequests(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r, clusters, counter := countedReconciler(t, nil)
	g.Expect(counter.Steady([]int{5, 50}, 3, func(n int) func() {
		keys := provisioned(t, r, clusters, n)
		return func() { reconcileAll(g, r, keys) }
	}, t.Logf)).To(BeEmpty())
}

// countedReconciler wires the machine and cluster reconcilers as in production on a manager
// whose requests counter sees; calls (optional) counts the vSphere calls.
func countedReconciler(t *testing.T, calls *vcsimops.Calls) (*machine.Reconciler, *vcentercluster.Reconciler, *apicount.Counter) {
	t.Helper()
	counter := &apicount.Counter{}
	o := options(scaleFilter, &session.Sessions{WrapTransport: calls.Wrap})
	var r *machine.Reconciler
	var clusters *vcentercluster.Reconciler
	_, cancel, err := env.StartCountedManager(setup.Scheme(), counter.Wrap, func(ctx context.Context, mgr ctrl.Manager) error {
		cc, _, err := manager.ClusterCache(ctx, mgr, setup.ControllerName, scaleFilter, o.ClusterCache)
		if err != nil {
			return err
		}
		secrets, err := setup.LoginSecrets(mgr, o)
		if err != nil {
			return err
		}
		provider := setup.VCenterProvider(mgr, secrets, o)
		r = setup.NewVCenterMachineReconciler(mgr.GetClient(), mgr.GetAPIReader(), cc, provider, o)
		r.Recorder = mgr.GetEventRecorder("vcentermachine-controller")
		clusters = &vcentercluster.Reconciler{Client: mgr.GetClient(), Provider: provider, WatchFilterValue: scaleFilter}
		return nil
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(cancel)
	r.Default()
	return r, clusters, counter
}

// provisioned creates a cluster with n machines and reconciles them by hand until each is
// provisioned and waits for its Node; the guests report an address once their VM runs.
func provisioned(t *testing.T, r *machine.Reconciler, clusters *vcentercluster.Reconciler, n int) []client.ObjectKey {
	return provisionedChecking(t, r, clusters, n, nil)
}

// provisionedChecking is provisioned with a check after each reconcile.
func provisionedChecking(t *testing.T, r *machine.Reconciler, clusters *vcentercluster.Reconciler, n int, after func(g Gomega)) []client.ObjectKey {
	t.Helper()
	g := NewWithT(t)
	f := newCluster(t, scaleFilter)
	// The cluster reconciler takes the identity Secret as its cluster's (credentials.Own).
	g.Eventually(func(g Gomega) {
		_, err := clusters.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vcCluster)})
		g.Expect(err).NotTo(HaveOccurred())
		vc := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vcCluster), vc)).To(Succeed())
		g.Expect(vc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	spec := defaultSpec()
	spec.DiskGiB = 0 // the template's disk: one clone task that also powers on
	var keys []client.ObjectKey
	for i := range n {
		f.addMachine(t, fmt.Sprintf("win-md-0-%02d-%s", i, randSuffix()), userData, spec)
		keys = append(keys, client.ObjectKeyFromObject(f.vm))
	}
	c := vc(g)
	played := map[client.ObjectKey]bool{}
	g.Eventually(func(g Gomega) {
		reconcileAll(g, r, keys, after)
		for i, k := range keys {
			m := &infrav1.VCenterMachine{}
			g.Expect(k8s.Get(ctx, k, m)).To(Succeed())
			if m.Status.Provisioning.State == infrav1.StateWaitingForAddresses && !played[k] {
				guestSets(g, c, vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": fmt.Sprintf("10.1.%d.%d", i/200, i%200+10)})
				played[k] = true
			}
		}
		for _, k := range keys {
			m := &infrav1.VCenterMachine{}
			g.Expect(k8s.Get(ctx, k, m)).To(Succeed())
			g.Expect(m.Status.Provisioning.State).To(Equal(infrav1.StateProvisioned), "%s: %+v", k, m.Status.Conditions)
		}
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
	return keys
}

// reconcileAll reconciles each machine once; after (optional) runs after each reconcile.
func reconcileAll(g Gomega, r *machine.Reconciler, keys []client.ObjectKey, after ...func(g Gomega)) {
	for _, k := range keys {
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: k})
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range after {
			if f != nil {
				f(g)
			}
		}
	}
}

// TestOneStatusWritePerReconcile: a reconcile writes what it changed, conditions included, in
// one status patch (CAPI's patch helper spends a read and two patches on it). Through a whole
// create, a reconcile sends at most one status patch, and the one that sends the clone at most
// two: the create intent is written before the clone is sent.
func TestOneStatusWritePerReconcile(t *testing.T) {
	t.Parallel()
	calls := &vcsimops.Calls{}
	r, clusters, counter := countedReconciler(t, calls)
	clones, worst, total := 0, 0, 0
	var over []string
	provisionedChecking(t, r, clusters, 1, func(Gomega) {
		patches := 0
		for a, n := range counter.Take() {
			if a.Verb == "patch" && a.Resource == "vcentermachines/status" {
				patches += n
			}
		}
		cloned := calls.Snapshot()["CloneVM_Task"] - clones
		clones += cloned
		worst, total = max(worst, patches), total+patches
		if patches > 1+cloned {
			over = append(over, fmt.Sprintf("%d status patches in a reconcile that sent %d clones", patches, cloned))
		}
	})
	t.Logf("status patches: %d for the create, at most %d in one reconcile", total, worst)
	NewWithT(t).Expect(over).To(BeEmpty())
}
