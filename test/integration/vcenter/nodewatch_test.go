package vcenter_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/guestos"
	"github.com/capwin/capwin/internal/manager"
)

// slowPollFilter labels the objects of the manager whose guest poll is an hour.
const slowPollFilter = "slow-poll"

// TestNodeIsLinkedWhenItRegisters: the Node a guest registers gets its providerID as soon as it
// appears, not at the next guest poll (regression: a manager polling every hour left it
// unlinked for that hour, and CAPI's Machine never found its Node). The manager here polls the
// guest once an hour, so only the watch on the workload cluster's Nodes can link it.
func TestNodeIsLinkedWhenItRegisters(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	startSlowPollManager(t)
	f := newCluster(t, slowPollFilter)
	f.addMachine(t, "win-md-0-nodewatch-"+randSuffix(), userData, defaultSpec())

	// The guest reports its IP once the VM exists; a touch of the object stands in for the
	// poll this manager would make only an hour later.
	var m *infrav1.VCenterMachine
	g.Eventually(func(g Gomega) {
		m = f.get(g)
		g.Expect(m.Status.VM.ID).NotTo(BeEmpty())
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	guestSets(g, vc(g), vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": "10.0.0.31"})
	g.Eventually(func(g Gomega) {
		m = f.get(g)
		if ptr.Deref(m.Status.Initialization.Provisioned, false) {
			return
		}
		base := m.DeepCopy()
		m.Annotations = map[string]string{"test.capwin.io/touch": time.Now().Format(time.RFC3339Nano)}
		g.Expect(k8s.Patch(ctx, m, client.MergeFrom(base))).To(Succeed())
		g.Expect(ptr.Deref(m.Status.Initialization.Provisioned, false)).To(BeTrue())
	}, 20*time.Second, time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		prev := m.ResourceVersion
		m = f.get(g)
		g.Expect(m.ResourceVersion).To(Equal(prev))
	}, 20*time.Second, 2*time.Second).Should(Succeed())

	// The Node registers without a providerID after the machine's last reconcile (the ones its
	// own status writes bring are over once the object stays unchanged).
	g.Consistently(func(g Gomega) {
		g.Expect(f.get(g).ResourceVersion).To(Equal(m.ResourceVersion))
	}, 3*time.Second, 100*time.Millisecond).Should(Succeed())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: guestos.NodeName(m.Status.ComputerName)}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(ctx, node) })
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// startSlowPollManager runs a second manager (production wiring, no webhooks) for the objects
// labelled slowPollFilter, with a guest poll of an hour.
func startSlowPollManager(t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: manager.CacheOptions("", time.Minute), Client: manager.ClientOptions(),
		// The suite's manager registered controllers of the same names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	o := options(slowPollFilter, sessions())
	o.PollInterval = time.Hour
	mctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	NewWithT(t).Expect(setup.Reconcilers(mctx, mgr, o)).To(Succeed())
	go func() { _ = mgr.Start(mctx) }()
	NewWithT(t).Expect(mgr.GetCache().WaitForCacheSync(mctx)).To(BeTrue())
}
