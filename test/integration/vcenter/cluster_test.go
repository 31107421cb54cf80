package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestVCenterCluster: a good identity and thumbprint make the cluster's infrastructure
// provisioned and the identity Secret travels with clusterctl move; a wrong thumbprint or a
// missing Secret is a clear condition.
func TestVCenterCluster(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	g.Eventually(func(g Gomega) {
		vc := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vcCluster), vc)).To(Succeed())
		g.Expect(ptr.Deref(vc.Status.Initialization.Provisioned, false)).To(BeTrue())
		g.Expect(condition(vc.Status.Conditions, infrav1.HypervisorAvailableCondition).Status).To(Equal(metav1.ConditionTrue))
		secret := &corev1.Secret{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "vcenter-identity"}, secret)).To(Succeed())
		g.Expect(secret.OwnerReferences).To(ContainElement(HaveField("UID", vc.UID)))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())

	for name, tc := range map[string]struct {
		mutate func(*infrav1.VCenterCluster)
		reason string
		msg    string
	}{
		"wrong thumbprint": {func(vc *infrav1.VCenterCluster) {
			vc.Spec.Thumbprint = "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD"
		}, infrav1.TLSVerificationFailedReason, "not trusted"},
		"missing identity":   {func(vc *infrav1.VCenterCluster) { vc.Spec.IdentityRef.Name = "nope" }, infrav1.CredentialsNotFoundReason, "nope"},
		"missing datacenter": {func(vc *infrav1.VCenterCluster) { vc.Spec.Datacenter = "DC9" }, infrav1.PlacementNotFoundReason, "DC9"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := newCluster(t, watchFilter)
			vc := &infrav1.VCenterCluster{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vcCluster), vc)).To(Succeed())
			// Recreate with the bad spec (server and datacenter are immutable).
			g.Expect(k8s.Delete(ctx, vc)).To(Succeed())
			bad := f.vcCluster.DeepCopy()
			bad.ResourceVersion, bad.UID = "", ""
			tc.mutate(bad)
			g.Eventually(func() error { return k8s.Create(ctx, bad) }, 10*time.Second, 50*time.Millisecond).Should(Succeed())
			g.Eventually(func(g Gomega) {
				got := &infrav1.VCenterCluster{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bad), got)).To(Succeed())
				c := condition(got.Status.Conditions, infrav1.HypervisorAvailableCondition)
				g.Expect(c.Reason).To(Equal(tc.reason), "%+v", c)
				g.Expect(c.Message).To(ContainSubstring(tc.msg))
				g.Expect(got.Status.Initialization.Provisioned).To(BeNil())
			}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
		})
	}
}

// TestPaused: a paused Cluster's machines are not touched.
func TestPaused(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	setPaused(g, f, true)
	f.addMachine(t, "win-md-0-paused-"+randSuffix(), userData, defaultSpec())
	g.Eventually(func(g Gomega) {
		g.Expect(condition(f.get(g).Status.Conditions, "Paused").Status).To(Equal(metav1.ConditionTrue))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(vmsWithUUID(g, vc(g), string(f.get(g).UID))).To(BeEmpty())
	}, time.Second, 200*time.Millisecond).Should(Succeed())

	setPaused(g, f, false)
	f.waitReason(t, infrav1.WaitingForAddressesReason)
}

// setPaused sets Cluster.spec.paused, retrying on conflicts with the controllers' writes.
func setPaused(g Gomega, f *fixture, paused bool) {
	g.Eventually(func() error {
		c := &clusterv1.Cluster{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(f.cluster), c); err != nil {
			return err
		}
		c.Spec.Paused = ptr.To(paused)
		return k8s.Update(ctx, c)
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}
