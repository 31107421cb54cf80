package windowsconfig_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/internal/manager"
)

// directFilter labels objects no manager of the suite reconciles: the test calls Reconcile.
const directFilter = "direct"

// TestOneReconcileWritesTheData: the first reconcile of a config its Machine owns writes the
// Paused condition and the bootstrap data both (regression: it returned after the Paused
// condition, and the data waited for the next reconcile, which CAPI's rate limit holds back a
// second — a second on the path of every new machine, in every rollout wave).
func TestOneReconcileWritesTheData(t *testing.T) {
	g := NewWithT(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: manager.CacheOptions("", 0), Client: manager.ClientOptions(),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	mctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	cc, secrets, err := manager.ClusterCache(mctx, mgr, "windowsconfig-direct", directFilter, manager.ClusterCacheOptions{Concurrency: 1, QPS: 50, Burst: 100})
	g.Expect(err).NotTo(HaveOccurred())
	r := &windowsconfig.Reconciler{Client: mgr.GetClient(), SecretCachingClient: secrets, ClusterCache: cc,
		Recorder: mgr.GetEventRecorder("windowsconfig-direct"), TokenTTL: windowsconfig.DefaultTokenTTL, JoinTimeout: windowsconfig.DefaultJoinTimeout}
	go func() { _ = mgr.Start(mctx) }()
	g.Expect(mgr.GetCache().WaitForCacheSync(mctx)).To(BeTrue())

	o := readyCluster()
	o.filter = directFilter
	f := newFixture(t, o)
	g.Eventually(func(g Gomega) { // the cache holds the objects as they are, the cluster is connected
		c := mgr.GetClient()
		cfg, m, cl := &bootstrapv1.WindowsConfig{}, &clusterv1.Machine{}, &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(f.config), cfg)).To(Succeed())
		g.Expect(cfg.OwnerReferences).NotTo(BeEmpty())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(f.cluster), cl)).To(Succeed())
		g.Expect(ptr.Deref(cl.Status.Initialization.ControlPlaneInitialized, false)).To(BeTrue())
		_, err := cc.GetClient(ctx, client.ObjectKeyFromObject(f.cluster))
		g.Expect(err).NotTo(HaveOccurred())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	_, err = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.config)})
	g.Expect(err).NotTo(HaveOccurred())
	cfg := f.get(g)
	g.Expect(ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false)).To(BeTrue(), "status: %+v", cfg.Status)
	g.Expect(cfg.Status.DataSecretName).NotTo(BeEmpty())
}
