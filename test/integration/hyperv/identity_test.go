package hyperv_test

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

// TestSharedSecretRefused: a second HyperVCluster naming the hosts Secret of another one is
// refused (CredentialsInUse, naming the first) and does not become an owner of it.
func TestSharedSecretRefused(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: watchFilter}},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "HyperVCluster", Name: "other"}},
	}
	g.Expect(k8s.Create(ctx, cluster)).To(Succeed())
	other := &infrav1.HyperVCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: f.ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "other", clusterv1.WatchLabel: watchFilter},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "other", UID: cluster.UID}}},
		Spec: *f.hc.Spec.DeepCopy(),
	}
	other.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{}
	g.Expect(k8s.Create(ctx, other)).To(Succeed())
	waitHostsReason(t, other, infrav1.CredentialsInUseReason, "HyperVCluster win")
	secret := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "hosts"}, secret)).To(Succeed())
	g.Expect(secret.OwnerReferences).To(ConsistOf(HaveField("UID", f.hc.UID)))
}

// TestHyperVClusterIdentity: a HyperVCluster naming a HyperVClusterIdentity that does not allow
// its namespace is refused with a condition naming the identity; once the platform team lists
// the namespace, the cluster's hosts are used with the identity's login.
func TestHyperVClusterIdentity(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identityNamespace}})
	g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	secretName := "hosts-" + randSuffix()
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: identityNamespace},
		Data:       map[string][]byte{"username": []byte(hostUser), "password": []byte(hostPassword)},
	})).To(Succeed())
	id := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: secretName},
		Spec: infrav1.HyperVClusterIdentitySpec{ClusterIdentitySpec: infrav1.ClusterIdentitySpec{SecretName: secretName}, Hosts: lentHosts(), Allowed: lentResources()}}
	g.Expect(k8s.Create(ctx, id)).To(Succeed())

	f := newCluster(t, func(s *infrav1.HyperVClusterSpec) {
		for i := range s.Hosts {
			s.Hosts[i].CredentialsRef = infrav1.SecretReference{}
		}
		s.CredentialsRef = infrav1.HyperVIdentityReference{Kind: infrav1.HyperVClusterIdentityKind, Name: id.Name}
	})
	waitHostsReason(t, f.hc, infrav1.NamespaceNotAllowedReason, "HyperVClusterIdentity "+id.Name)

	g.Eventually(func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(id), id); err != nil {
			return err
		}
		id.Spec.AllowedNamespaces.List = []string{f.ns}
		return k8s.Update(ctx, id)
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	f.provisioned(t)
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(id), id)).To(Succeed())
	g.Expect(id.Status.Ready).To(BeTrue(), "%+v", id.Status.Conditions)
	g.Expect(f.hc.Status.Hosts).To(HaveEach(HaveField("Available", true)))
	g.Expect(ptr.Deref(f.hc.Status.Initialization.Provisioned, false)).To(BeTrue())
}

// waitHostsReason waits until HypervisorAvailable of a HyperVCluster has the reason and message.
func waitHostsReason(t *testing.T, hc *infrav1.HyperVCluster, reason, msg string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := &infrav1.HyperVCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hc), got)).To(Succeed())
		c := condition(got.Status.Conditions, infrav1.HypervisorAvailableCondition)
		g.Expect(c.Reason).To(Equal(reason), "%+v", c)
		g.Expect(c.Message).To(ContainSubstring(msg))
		g.Expect(got.Status.Initialization.Provisioned).To(BeNil())
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
}

// lentHosts is a hosts list of an identity that lends its login to the suite's hosts, each
// reached as the fixture's clusters reach it.
func lentHosts() []infrav1.HyperVIdentityHosts {
	var out []infrav1.HyperVIdentityHosts
	for _, h := range hosts {
		out = append(out, infrav1.HyperVIdentityHosts{Addresses: []string{h.srv.Host}, Port: int32(h.srv.Port), CABundle: h.srv.CACertPEM()}) //nolint:gosec // G115: a TCP port, below 2^16
	}
	return out
}

// lentResources lends the suite's switch and golden parent disks.
func lentResources() infrav1.HyperVAllowed {
	return infrav1.HyperVAllowed{Switches: []string{vswitch}, ParentDisks: []string{`C:\golden\`}}
}
