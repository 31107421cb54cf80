package vcenter_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// TestStateCountsOfOneShard: a manager with a watch filter counts only its shard's machines, so
// the capwin_machines series of the managers of several shards add up to the machines there are.
func TestStateCountsOfOneShard(t *testing.T) {
	g := NewWithT(t)
	f := newNamespace(t, "unused", nil)
	// The shards are this test's own: the machines of other tests (and of an earlier run of this
	// one with -count) are in no shard it counts.
	a, b := "shard-a-"+randSuffix(), "shard-b-"+randSuffix()
	for name, shard := range map[string]string{"a-1": a, "a-2": a, "b-1": b} {
		g.Expect(k8s.Create(ctx, &infrav1.VCenterMachine{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: shard}},
			Spec:       defaultSpec(),
		})).To(Succeed())
	}
	kind := machine.Kind{Name: "vcentermachine", NewList: func() client.ObjectList { return &infrav1.VCenterMachineList{} }}
	for shard, want := range map[string]float64{a: 2, b: 1} {
		reg := prometheus.NewPedanticRegistry()
		g.Expect(reg.Register(&machine.StateCounts{Reader: k8s, Kinds: []machine.Kind{kind}, WatchFilterValue: shard})).To(Succeed())
		g.Eventually(func(g Gomega) {
			families, err := reg.Gather()
			g.Expect(err).NotTo(HaveOccurred())
			total := 0.0
			for _, mf := range families {
				if mf.GetName() == "capwin_machines" {
					for _, m := range mf.GetMetric() {
						total += m.GetGauge().GetValue()
					}
				}
			}
			g.Expect(total).To(Equal(want), "machines counted by the manager of %s", shard)
		}).Should(Succeed())
	}
}

// TestOtherShardUntouched: a reconcile request for a machine of another shard (as a Machine or
// Cluster of this shard would enqueue for a cluster half moved between shards) changes nothing:
// no finalizer, no status, no VM.
func TestOtherShardUntouched(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, "shard-b")
	f.addMachine(t, "win-md-0-shard-"+randSuffix(), userData, defaultSpec())
	r := manualReconciler(g, "shard-a", &vcsimops.Calls{})
	for range 3 {
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	m := f.get(g)
	g.Expect(m.Finalizers).To(BeEmpty())
	g.Expect(m.Status.Provisioning.State).To(BeEmpty())
	g.Expect(m.Status.Conditions).To(BeEmpty())
}
