package machine_test

import (
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestSharedSecretRefused: a second VCenterCluster naming the identity Secret of another one
// (with a server of its own choosing) is refused: the Secret gains no owner, no login is sent
// with it, and the cluster and its machines say CredentialsInUse, naming the first; the first
// keeps working. (Before, the second became an owner too and logged in to its server.)
func TestSharedSecretRefused(t *testing.T) {
	g := NewWithT(t)
	f := newNamespace(t, watchFilter, nil)
	f.addIdentitySecret(t, f.ns, "vcenter-identity")
	f.addCluster(t, "win", nil)
	waitAvailable(t, f.vcCluster)
	secret := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "vcenter-identity"}, secret)).To(Succeed())
		g.Expect(secret.OwnerReferences).To(ContainElement(HaveField("UID", f.vcCluster.UID)))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	before := logins.Load()

	// The same vcsim under another name: a login through it would need a session of its own.
	_, port, err := net.SplitHostPort(vcsim.URL.Host)
	g.Expect(err).NotTo(HaveOccurred())
	other := &fixture{ns: f.ns, filter: f.filter}
	other.addCluster(t, "other", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://localhost:" + port })
	other.addMachine(t, "other-md-0-"+randSuffix(), userData, defaultSpec())
	g.Eventually(func(g Gomega) {
		vc := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other.vcCluster), vc)).To(Succeed())
		c := condition(vc.Status.Conditions, infrav1.HypervisorAvailableCondition)
		g.Expect(c.Reason).To(Equal(infrav1.CredentialsInUseReason), "%+v", c)
		g.Expect(c.Message).To(ContainSubstring("VCenterCluster win"))
		g.Expect(vc.Status.Initialization.Provisioned).To(BeNil())
		m := condition(other.get(g).Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(m.Reason).To(Equal(infrav1.CredentialsInUseReason), "%+v", m)
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(logins.Load() - before).To(BeZero())
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.OwnerReferences).NotTo(ContainElement(HaveField("UID", other.vcCluster.UID)))
	}, 2*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(vmsWithUUID(g, vc(g), string(other.get(g).UID))).To(BeEmpty())

	// The first cluster is checked again and still works.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vcCluster), f.vcCluster)).To(Succeed())
	f.vcCluster.Annotations = map[string]string{"test": "recheck"}
	g.Expect(k8s.Update(ctx, f.vcCluster)).To(Succeed())
	waitAvailable(t, f.vcCluster)
}

// waitAvailable waits until a VCenterCluster's HypervisorAvailable is True.
func waitAvailable(t *testing.T, obj *infrav1.VCenterCluster) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		vc := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), vc)).To(Succeed())
		c := condition(vc.Status.Conditions, infrav1.HypervisorAvailableCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%+v", c)
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
}
