package windowsconfig_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// TestHostileLoginAsRegistryCredentials (hostile-tenant suite): a WindowsConfig naming the
// namespace's hypervisor login Secret (one a HyperVCluster holds) as registry credentials gets no
// data: the condition names the Secret's holder, and the password reaches no node.
func TestHostileLoginAsRegistryCredentials(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.spec.Containerd.Registries = []bootstrapv1.Registry{{Host: "registry.corp.example",
		RegistryAccess: bootstrapv1.RegistryAccess{Credentials: &bootstrapv1.SecretName{Name: "hosts"}}}}
	f := newFixture(t, o)
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hosts", Namespace: f.ns,
		Labels:          map[string]string{"infrastructure.cluster.x-k8s.io/credentials": ""},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "HyperVCluster", Name: "win", UID: "hc"}}},
		Data: map[string][]byte{"username": []byte("CORP\\svc-hyperv"), "password": []byte("host-s3cr3t")}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(f.get(g).Status.Conditions).To(ContainElement(And(
			HaveField("Reason", bootstrapv1.RegistryReferenceNotAvailableReason),
			HaveField("Message", ContainSubstring("is the hypervisor login of HyperVCluster win")))))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	for _, c := range f.get(g).Status.Conditions {
		g.Expect(c.Message).NotTo(ContainSubstring("host-s3cr3t"))
	}
	g.Expect(f.get(g).Status.DataSecretName).To(BeEmpty())
}
