package setup

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestFailedOverMachines: a failover cluster's HyperVCluster with host hv1 unavailable maps to the
// machines of its cluster recorded on hv1, not to those on hv2 nor to another cluster's; standalone
// hosts map to nothing.
func TestFailedOverMachines(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(infrav1.AddToScheme(scheme)).To(Succeed())
	machine := func(name, cluster, host string) client.Object {
		m := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}}}
		m.Status.VM.Host = host
		return m
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		machine("a", "c1", "hv1"), machine("b", "c1", "hv2"), machine("other", "c2", "hv1")).Build()
	hc := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}}
	hc.Status.Hosts = []infrav1.HyperVHostStatus{{Name: "hv1", Available: false}, {Name: "hv2", Available: true}}
	mapper := failedOverMachines(c)

	g.Expect(mapper(context.Background(), hc)).To(BeEmpty(), "standalone hosts: a VM cannot move")
	hc.Spec.FailoverCluster = &infrav1.HyperVFailoverCluster{Name: "HVCLU1", StoragePath: `C:\ClusterStorage\Volume1\capwin`}
	g.Expect(mapper(context.Background(), hc)).To(ConsistOf(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}))
	hc.Status.Hosts[0].Available = true
	g.Expect(mapper(context.Background(), hc)).To(BeEmpty(), "every host up")
}
