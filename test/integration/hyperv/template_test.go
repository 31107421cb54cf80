package hyperv_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestTemplateCapacity: a HyperVMachineTemplate publishes what its nodes offer, for the cluster
// autoscaler to scale a Windows MachineDeployment from zero.
func TestTemplateCapacity(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	spec := defaultSpec()
	spec.Processors, spec.MemoryMiB = 4, 8192
	tmpl := &infrav1.HyperVMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-ws2022", Namespace: f.ns,
			Labels: map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.WatchLabel: watchFilter}},
		Spec: infrav1.HyperVMachineTemplateSpec{Template: infrav1.HyperVMachineTemplateResource{Spec: spec}},
	}
	g.Expect(k8s.Create(ctx, tmpl)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(tmpl), tmpl)).To(Succeed())
		g.Expect(tmpl.Status.NodeInfo.OperatingSystem).To(Equal("windows"))
		g.Expect(tmpl.Status.Capacity.Cpu().Equal(resource.MustParse("4"))).To(BeTrue(), "%v", tmpl.Status.Capacity)
		g.Expect(tmpl.Status.Capacity[corev1.ResourceMemory]).To(Equal(resource.MustParse("8Gi")))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}
