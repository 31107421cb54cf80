package windowsconfig_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

const tokenExpiredAnnotation = "bootstrap.cluster.x-k8s.io/windows-token-expired-unused"

// TestTokenOfAMachineThatNeverJoinsIsRevokedAtTheJoinTimeout: a VM that never joins must not
// keep a refreshed join credential forever (regression: the token was extended for as long as
// the Machine had no Node).
func TestTokenOfAMachineThatNeverJoinsIsRevokedAtTheJoinTimeout(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.shortJoinTimeout = true
	f := newFixture(t, o)
	s := f.dataSecret(t)
	id := s.Annotations[tokenIDAnnotation]
	deadline := s.CreationTimestamp.Add(shortJoinTimeout)
	exp, err := time.Parse(time.RFC3339, string(tokenSecret(g, id).Data[bootstrapapi.BootstrapTokenExpirationKey]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exp).NotTo(BeTemporally(">", deadline), "the token itself expires at the join deadline")

	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "token revoked at the join timeout: %v", err)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	c := f.waitReason(t, bootstrapv1.BootstrapTokenExpiredReason)
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Message).To(ContainSubstring("--bootstrap-join-timeout"))
	g.Expect(f.condition(g, bootstrapv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
	g.Expect(s.Annotations).To(HaveKey(tokenExpiredAnnotation))
	g.Eventually(func(g Gomega) []string {
		return warningEvents(g, f, bootstrapv1.BootstrapTokenExpiredReason)
	}, 10*time.Second, 100*time.Millisecond).Should(HaveLen(1))

	// Never refreshed nor re-issued afterwards, whatever wakes the config up.
	value := s.Data["value"]
	g.Consistently(func(g Gomega) {
		touch(g, f)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations[tokenIDAnnotation]).To(Equal(id), "no new token")
		g.Expect(s.Data["value"]).To(Equal(value), "bootstrap data not re-rendered")
		err := k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the revoked token stays revoked: %v", err)
		g.Expect(f.condition(g, bootstrapv1.DataSecretAvailableCondition).Reason).To(Equal(bootstrapv1.BootstrapTokenExpiredReason))
	}, 3*time.Second, 300*time.Millisecond).Should(Succeed())
	g.Expect(warningEvents(g, f, bootstrapv1.BootstrapTokenExpiredReason)).To(HaveLen(1), "one event")
}

// TestMachineThatJoinsInTimeIsUnaffectedByTheJoinTimeout: a node that joined before the
// deadline keeps a healthy config after it.
func TestMachineThatJoinsInTimeIsUnaffectedByTheJoinTimeout(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.shortJoinTimeout = true
	f := newFixture(t, o)
	s := f.dataSecret(t)
	m := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "win-md-0-abcde"}
	g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())

	time.Sleep(time.Until(s.CreationTimestamp.Add(shortJoinTimeout + time.Second)))
	g.Consistently(func(g Gomega) {
		touch(g, f)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations).NotTo(HaveKey(tokenExpiredAnnotation))
		c := f.condition(g, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "condition: %+v", c)
	}, 2*time.Second, 300*time.Millisecond).Should(Succeed())
	g.Expect(s.Annotations).To(HaveKey(tokenRevokedAnnotation), "revoked because it joined")
	g.Expect(warningEvents(g, f, bootstrapv1.BootstrapTokenExpiredReason)).To(BeEmpty())
}

// warningEvents lists the fixture namespace's Warning events of a reason.
func warningEvents(g Gomega, f *fixture, reason string) []string {
	list := &corev1.EventList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}
