package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestRefusedIdentityIsTriedOnce: with a wrong password in the identity Secret, the VCenterCluster
// and every machine, over several workers and many reconciles, cost vCenter one refused login,
// and they say which Secret to fix; once the Secret is fixed, the machines go on.
func TestRefusedIdentityIsTriedOnce(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	secret := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "vcenter-identity"}, secret)).To(Succeed())
	// The tagged user tells this test's logins apart from those of other tests' objects.
	user := vcsimUser.Username() + "+lock-" + randSuffix()
	good := secret.Data["password"]
	secret.Data["username"] = []byte(user)
	secret.Data["password"] = []byte("wrong-" + randSuffix())
	g.Expect(k8s.Update(ctx, secret)).To(Succeed())

	var names []string
	for range 6 {
		name := "win-lock-" + randSuffix()
		names = append(names, name)
		f.addMachine(t, name, []byte("#ps1_sysnative\n"), defaultSpec())
	}
	reasons := func(g Gomega) map[string]string {
		out := map[string]string{}
		for _, n := range names {
			m := &infrav1.VCenterMachine{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: n}, m)).To(Succeed())
			c := condition(m.Status.Conditions, infrav1.VMProvisionedCondition)
			out[n] = c.Reason
			if c.Reason == infrav1.AuthenticationFailedReason {
				g.Expect(c.Message).To(ContainSubstring(f.ns + "/vcenter-identity"))
				g.Expect(c.Message).To(ContainSubstring("update the Secret to retry"))
			}
		}
		return out
	}
	g.Eventually(func(g Gomega) {
		g.Expect(reasons(g)).To(HaveEach(infrav1.AuthenticationFailedReason), "refused logins: %d", refused.of(user))
		vc := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vcCluster), vc)).To(Succeed())
		g.Expect(condition(vc.Status.Conditions, infrav1.HypervisorAvailableCondition).Reason).To(Equal(infrav1.AuthenticationFailedReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	// Machines look again every 200ms (CredentialRecheck); none may log in again.
	time.Sleep(2 * time.Second)
	g.Expect(refused.of(user)).To(Equal(1))

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	secret.Data["password"] = good
	g.Expect(k8s.Update(ctx, secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for n, reason := range reasons(g) {
			g.Expect(reason).NotTo(BeElementOf(infrav1.AuthenticationFailedReason, infrav1.WaitingForBootstrapDataReason, ""), n)
		}
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(refused.of(user)).To(Equal(1))
}
