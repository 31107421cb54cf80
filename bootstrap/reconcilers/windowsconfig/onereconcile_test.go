package windowsconfig_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/internal/manager"
)

// TestNewConfigGetsItsDataInOneReconcile: the first reconcile of a WindowsConfig that its
// Machine owns writes the Paused condition and the data Secret. (It used to return after the
// Paused condition, and the data waited for a second reconcile, which CAPI's per-object rate
// limit holds back a second, on every new machine's path.) The reconciler is called directly,
// on objects that no manager of the suite takes.
func TestNewConfigGetsItsDataInOneReconcile(t *testing.T) {
	g := NewWithT(t)
	const filter = "direct"
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mgr, err := newManager()
	g.Expect(err).NotTo(HaveOccurred())
	cc, secrets, err := manager.ClusterCache(mctx, mgr, "direct", filter, clusterCacheOptions)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(start(mctx, mgr, filter)).To(Succeed())
	r := &windowsconfig.Reconciler{
		Client: mgr.GetClient(), SecretCachingClient: secrets, ClusterCache: cc, WatchFilterValue: filter,
		TokenTTL: windowsconfig.DefaultTokenTTL, JoinTimeout: windowsconfig.DefaultJoinTimeout,
		Recorder: mgr.GetEventRecorder("direct"),
	}
	o := readyCluster()
	o.filter = filter
	f := newFixture(t, o)
	key := client.ObjectKeyFromObject(f.config)
	g.Eventually(func(g Gomega) { // what the reconcile reads: the manager's cache and the workload cluster
		g.Expect(mgr.GetClient().Get(mctx, key, &bootstrapv1.WindowsConfig{})).To(Succeed())
		g.Expect(mgr.GetClient().Get(mctx, client.ObjectKeyFromObject(f.machine), &clusterv1.Machine{})).To(Succeed())
		_, err := cc.GetClient(mctx, client.ObjectKeyFromObject(f.cluster))
		g.Expect(err).NotTo(HaveOccurred())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	_, err = r.Reconcile(mctx, ctrl.Request{NamespacedName: key})
	g.Expect(err).NotTo(HaveOccurred())
	cfg := &bootstrapv1.WindowsConfig{} // from the API server: the suite's client reads a cache
	g.Expect(mgr.GetAPIReader().Get(mctx, key, cfg)).To(Succeed())
	g.Expect(conditions.IsFalse(cfg, clusterv1.PausedCondition)).To(BeTrue(), "Paused condition written")
	g.Expect(cfg.Status.DataSecretName).NotTo(BeEmpty(), "data Secret written in the same reconcile")
	f.dataSecret(t)
}
