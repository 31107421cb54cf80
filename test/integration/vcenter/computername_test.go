package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestComputerNameTaken: a machine whose own name another machine of the cluster already holds
// as its computer name (in another case) gets another computer name; the manager finds the
// holder through its field index.
func TestComputerNameTaken(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	name := "win-" + randSuffix()
	// The holder is not reconciled by the suite's manager (another watch filter).
	holder := &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "holder-" + randSuffix(), Namespace: f.ns,
			Labels: map[string]string{clusterv1.ClusterNameLabel: f.name, clusterv1.WatchLabel: "nobody"}},
		Spec: defaultSpec(),
	}
	g.Expect(k8s.Create(ctx, holder)).To(Succeed())
	holder.Status.ComputerName = "WIN-" + name[4:]
	g.Expect(k8s.Status().Update(ctx, holder)).To(Succeed())
	g.Eventually(func(g Gomega) { // the manager's cache holds it
		h := &infrav1.VCenterMachine{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(holder), h)).To(Succeed())
		g.Expect(h.Status.ComputerName).NotTo(BeEmpty())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	f.addMachine(t, name, userData, defaultSpec())
	var got string
	g.Eventually(func(g Gomega) {
		got = f.get(g).Status.ComputerName
		g.Expect(got).NotTo(BeEmpty())
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(got).NotTo(Equal(name))
	g.Expect(got).To(HavePrefix("win-"))
	g.Expect(len(got)).To(BeNumerically("<=", 15))
}
