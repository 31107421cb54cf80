package vcenter_test

import (
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/soap"
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
	t.Parallel()
	g := NewWithT(t)
	f := newNamespace(t, watchFilter, nil)
	user := "capwin+" + randSuffix() // tells this test's logins apart
	f.addIdentitySecret(t, f.ns, "vcenter-identity", user)
	f.addCluster(t, "win", nil)
	waitAvailable(t, f.vcCluster)
	secret := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "vcenter-identity"}, secret)).To(Succeed())
		g.Expect(secret.OwnerReferences).To(ContainElement(HaveField("UID", f.vcCluster.UID)))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	before := logins.of(user)
	g.Expect(before).To(BeNumerically(">=", 1), "the first cluster logged in as %s", user)

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
		g.Expect(logins.of(user) - before).To(BeZero())
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

// TestClusterIdentity: a VCenterClusterIdentity lends the login in the manager's namespace to the
// namespaces it allows. A tenant namespace it selects gets a working cluster and machine without a
// Secret of its own; a namespace it does not allow is refused with a condition naming the
// identity and nothing is sent to the server that cluster names; a change of allowedNamespaces
// takes effect both ways.
func TestClusterIdentity(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ensureNamespace(t, identityNamespace)
	suffix := randSuffix()
	secretName, label := "vc-login-"+suffix, "tenant-"+suffix
	f := newNamespace(t, watchFilter, map[string]string{label: "yes"})
	user := "capwin+" + suffix // tells this test's logins apart
	f.addIdentitySecret(t, identityNamespace, secretName, user)
	id := &infrav1.VCenterClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: "tenants-" + suffix},
		Spec: infrav1.VCenterClusterIdentitySpec{
			ClusterIdentitySpec: infrav1.ClusterIdentitySpec{SecretName: secretName, AllowedNamespaces: infrav1.AllowedNamespaces{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}}}},
			Servers: []infrav1.VCenterIdentityServer{{Server: "https://" + vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(vcsim.Certificate())}},
			Allowed: lentObjects(),
		},
	}
	g.Expect(k8s.Create(ctx, id)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(id), id)).To(Succeed())
		g.Expect(id.Status.Ready).To(BeTrue(), "%+v", id.Status.Conditions)
		secret := &corev1.Secret{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: identityNamespace, Name: secretName}, secret)).To(Succeed())
		g.Expect(secret.OwnerReferences).To(ConsistOf(HaveField("UID", id.UID)))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	useIdentity := func(s *infrav1.VCenterClusterSpec) {
		s.IdentityRef = infrav1.VCenterIdentityReference{Kind: infrav1.VCenterClusterIdentityKind, Name: id.Name}
	}

	// The tenant: no Secret in its namespace, a cluster and a machine that is cloned.
	f.addCluster(t, "win", useIdentity)
	waitAvailable(t, f.vcCluster)
	f.addMachine(t, "win-md-0-"+randSuffix(), userData, defaultSpec())
	f.waitReason(t, infrav1.WaitingForAddressesReason)
	secrets := &corev1.SecretList{}
	g.Expect(k8s.List(ctx, secrets, client.InNamespace(f.ns))).To(Succeed())
	for _, s := range secrets.Items {
		g.Expect(s.Data).NotTo(HaveKey("password"), s.Name)
	}

	// Another namespace, not allowed, naming the same vcsim under another name: the identity
	// does not lend its login there, so admission refuses the cluster.
	_, port, err := net.SplitHostPort(vcsim.URL.Host)
	g.Expect(err).NotTo(HaveOccurred())
	before := logins.of(user)
	g.Expect(before).To(BeNumerically(">=", 1), "the tenant's cluster logged in as %s", user)
	other := newNamespace(t, watchFilter, nil)
	otherServer := "https://localhost:" + port
	// borrower is a VCenterCluster of the other namespace that names that server.
	borrower := func() *infrav1.VCenterCluster {
		return &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: other.ns},
			Spec: infrav1.VCenterClusterSpec{Server: otherServer, Datacenter: "DC0",
				IdentityRef: infrav1.VCenterIdentityReference{Kind: infrav1.VCenterClusterIdentityKind, Name: id.Name}}}
	}
	g.Expect(k8s.Create(ctx, borrower())).To(MatchError(And(ContainSubstring("spec.server"),
		ContainSubstring("does not lend its login to "+otherServer))))

	updateIdentity := func(change func(*infrav1.VCenterClusterIdentity)) {
		g.Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(id), id); err != nil {
				return err
			}
			change(id)
			return k8s.Update(ctx, id)
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	}
	lendOther := func(id *infrav1.VCenterClusterIdentity) {
		id.Spec.Servers = append(id.Spec.Servers, infrav1.VCenterIdentityServer{Server: otherServer, Thumbprint: id.Spec.Servers[0].Thumbprint})
	}
	// The platform team lends the login to that server name too; the namespace is not allowed.
	updateIdentity(lendOther)
	g.Eventually(func() error { // once the webhook's cache has the change
		return k8s.Create(ctx, borrower(), client.DryRunAll)
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	other.addCluster(t, "win", func(s *infrav1.VCenterClusterSpec) { useIdentity(s); s.Server = otherServer })
	waitClusterReason(t, other.vcCluster, infrav1.NamespaceNotAllowedReason, "VCenterClusterIdentity "+id.Name)
	g.Consistently(func() int { return logins.of(user) - before }, time.Second, 100*time.Millisecond).Should(BeZero())

	// The platform team allows the other namespace by name, stops selecting the first, and takes
	// that server name back: the reconciler, which does not trust that admission ran, sends
	// nothing there.
	updateIdentity(func(id *infrav1.VCenterClusterIdentity) {
		id.Spec.AllowedNamespaces = infrav1.AllowedNamespaces{List: []string{other.ns}}
		id.Spec.Servers = id.Spec.Servers[:1]
	})
	waitClusterReason(t, other.vcCluster, infrav1.EndpointNotLentReason, "does not lend its login to "+otherServer)
	g.Consistently(func() int { return logins.of(user) - before }, time.Second, 100*time.Millisecond).Should(BeZero())

	// Once the server name is lent again, the other cluster uses the login.
	updateIdentity(lendOther)
	waitAvailable(t, other.vcCluster)
	g.Expect(logins.of(user)).To(BeNumerically(">", before), "the other cluster's server got the identity's login")
	waitClusterReason(t, f.vcCluster, infrav1.NamespaceNotAllowedReason, f.ns)
	f.waitReason(t, infrav1.NamespaceNotAllowedReason) // its machine, too
}

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	NewWithT(t).Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
}
