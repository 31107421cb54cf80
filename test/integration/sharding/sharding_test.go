package sharding

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/harness"
)

// leaseNamespace holds the managers' leader election Leases (a Pod's own namespace in production).
const leaseNamespace = "capwin-shards"

// TestSharding runs the managers of shards a and b and one Cluster (one Windows machine) in
// each shard:
//   - while only manager a runs, cluster a is provisioned and cluster b is left alone (its
//     VCenterCluster has no status, no VM is cloned for it);
//   - once manager b runs, cluster b is provisioned too;
//   - each manager holds its own Lease, and counts only its own shard's machine in
//     capwin_machines.
func TestSharding(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: two apiservers, vcsim, two manager processes")
	}
	g := NewWithT(t)
	ctx := t.Context()
	bin := filepath.Join(t.TempDir(), "capwin-infrastructure")
	built := make(chan error, 1)
	go func() { built <- build(bin) }()
	h := start(t)
	g.Expect(<-built).To(Succeed())
	c := h.Management.Client
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}})).To(Succeed())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(h.Management.Env.WriteAdminKubeconfig("capwin-shards", kubeconfig)).To(Succeed())

	a := startManager(t, bin, kubeconfig, h, "a")
	for _, shard := range []string{"a", "b"} {
		g.Expect(createCluster(ctx, h, shard)).To(Succeed())
	}
	waitProvisioned(t, c, "a")
	g.Expect(vmsOf(ctx, h, "b")).To(BeZero(), "a VM was cloned for cluster b while only manager a ran")
	vcb := &infrav1.VCenterCluster{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "shard-b", Name: "win"}, vcb)).To(Succeed())
	g.Expect(vcb.Status.Conditions).To(BeEmpty(), "manager a reconciled cluster b's VCenterCluster")
	g.Expect(vcb.Finalizers).To(BeEmpty())

	b := startManager(t, bin, kubeconfig, h, "b")
	waitProvisioned(t, c, "b")
	g.Expect(vmsOf(ctx, h, "a")).To(Equal(1))
	g.Expect(vmsOf(ctx, h, "b")).To(Equal(1))

	holders := map[string]bool{}
	for _, shard := range []string{"a", "b"} {
		lease := &coordinationv1.Lease{}
		key := client.ObjectKey{Namespace: leaseNamespace, Name: manager.LeaseName(infrasetup.ControllerName, shard)}
		g.Expect(c.Get(ctx, key, lease)).To(Succeed(), "Lease of shard %s", shard)
		g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		holders[*lease.Spec.HolderIdentity] = true
	}
	g.Expect(holders).To(HaveLen(2), "the shards' Leases have one holder each")
	for _, m := range []*process{a, b} {
		g.Eventually(func() (float64, error) { return m.metric("capwin_machines") }, 30*time.Second, 200*time.Millisecond).
			Should(Equal(1.0), "manager %s counts the machines of its shard only", m.shard)
	}
}

// start runs the harness without infrastructure reconcilers. CAPWIN_TEST_DEBUG=1 shows the
// in-process controllers' logs.
func start(t *testing.T) *harness.Harness {
	t.Helper()
	out := io.Discard
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		out = os.Stderr
	}
	log := zap.New(zap.WriteTo(out))
	ctrl.SetLogger(log)
	h, err := harness.Start(t.Context(), harness.Options{Log: log, Heartbeat: 5 * time.Second, JoinTimeout: time.Minute,
		InfrastructureElsewhere: true})
	if h != nil {
		t.Cleanup(func() {
			if err := h.Stop(); err != nil {
				t.Log("stop:", err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// build compiles the infrastructure manager.
func build(out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./infrastructure")
	cmd.Dir = envtest.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./infrastructure: %w\n%s", err, b)
	}
	return nil
}

// waitProvisioned waits for the machine of the shard's cluster to be provisioned (VM created,
// powered on, addresses reported by its guest).
func waitProvisioned(t *testing.T, c client.Client, shard string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		list := &infrav1.VCenterMachineList{}
		g.Expect(c.List(context.Background(), list, client.InNamespace("shard-"+shard))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		m := list.Items[0]
		g.Expect(m.Status.Initialization.Provisioned).To(HaveValue(BeTrue()), "machine %s: %s", m.Name, m.Status.Provisioning.State)
		g.Expect(m.Labels).To(HaveKeyWithValue(clusterv1.WatchLabel, shard))
	}, 3*time.Minute, 500*time.Millisecond).Should(Succeed())
}
