package vcenter_test

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

// TestTemplateStatus: a VCenterMachineTemplate publishes nodeInfo and capacity for scale from
// zero; sizes the spec leaves to the template are read from vCenter.
func TestTemplateStatus(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	labels := map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.WatchLabel: watchFilter}
	sized := &infrav1.VCenterMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "win-2025", Namespace: f.ns, Labels: labels},
		Spec: infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: defaultSpec()}}}
	keep := sized.DeepCopy()
	keep.Name = "win-template-sizes"
	keep.Spec.Template.Spec.NumCPUs, keep.Spec.Template.Spec.MemoryMiB = 0, 0
	for _, o := range []client.Object{sized, keep} {
		g.Expect(k8s.Create(ctx, o)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		got := &infrav1.VCenterMachineTemplate{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sized), got)).To(Succeed())
		g.Expect(got.Status.NodeInfo.OperatingSystem).To(Equal("windows"))
		g.Expect(got.Status.Capacity[corev1.ResourceCPU]).To(Equal(resource.MustParse("2")))
		g.Expect(got.Status.Capacity[corev1.ResourceMemory]).To(Equal(resource.MustParse("4Gi")))

		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(keep), got)).To(Succeed())
		g.Expect(got.Status.Capacity).To(HaveKey(corev1.ResourceCPU), "read from the vCenter template")
		g.Expect(got.Status.Capacity).To(HaveKey(corev1.ResourceMemory))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
}
