package vcenter_test

import (
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
)

// The hostile-tenant suite (vCenter): a tenant of a namespace an identity allows tries to make
// capwin act outside what the platform lends. Each attack is refused with a message that says
// what and why, and nothing reaches the attacker.

// attackerEndpoint is a TLS server of the attacker's that counts the connections it gets.
type attackerEndpoint struct {
	URL        string
	Thumbprint string
	CA         []byte
	conns      atomic.Int64
}

func newAttackerEndpoint(t *testing.T) *attackerEndpoint {
	t.Helper()
	a := &attackerEndpoint{}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			a.conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	a.Thumbprint = soap.ThumbprintSHA256(srv.Certificate())
	a.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return a
}

// TestHostileVCenterEndpoint: the identity's login goes to its listed server with its certificate
// check only. A tenant naming its own server (with its own CA or thumbprint), or the listed server
// without verification or with another certificate check, is refused at admission; a cluster
// admitted before the identity existed is refused by the reconciler. The attacker's server never
// gets a connection.
func TestHostileVCenterEndpoint(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	attacker := newAttackerEndpoint(t)
	id, tenant := lendingIdentity(t)
	listed := "https://" + vcsim.URL.Host
	borrow := func(mutate func(*infrav1.VCenterClusterSpec)) *infrav1.VCenterCluster {
		vc := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: "attack-" + randSuffix(), Namespace: tenant.ns},
			Spec: infrav1.VCenterClusterSpec{Server: listed, Datacenter: "DC0",
				IdentityRef: infrav1.VCenterIdentityReference{Kind: infrav1.VCenterClusterIdentityKind, Name: id.Name}}}
		mutate(&vc.Spec)
		return vc
	}
	for name, tc := range map[string]struct {
		mutate func(*infrav1.VCenterClusterSpec)
		field  string
		msg    string
	}{
		"own server, own CA": {func(s *infrav1.VCenterClusterSpec) { s.Server, s.CABundle = attacker.URL, attacker.CA },
			"spec.server", "does not lend its login to " + attacker.URL},
		"own server, own thumbprint": {func(s *infrav1.VCenterClusterSpec) { s.Server, s.Thumbprint = attacker.URL, attacker.Thumbprint },
			"spec.server", "does not lend its login to " + attacker.URL},
		"listed server, no verification": {func(s *infrav1.VCenterClusterSpec) { s.Insecure = true },
			"spec.insecure", "only with certificate verification"},
		"listed server, attacker's thumbprint": {func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = attacker.Thumbprint },
			"spec.thumbprint", "is not the thumbprint"},
		"listed server, attacker's CA": {func(s *infrav1.VCenterClusterSpec) { s.CABundle = attacker.CA },
			"spec.caBundle", "is not the CA bundle"},
	} {
		t.Run(name, func(t *testing.T) {
			err := k8s.Create(ctx, borrow(tc.mutate))
			NewWithT(t).Expect(err).To(MatchError(And(ContainSubstring(tc.field+": Forbidden"), ContainSubstring(tc.msg),
				ContainSubstring("VCenterClusterIdentity "+id.Name))))
		})
	}

	// Admitted while the identity did not exist: the reconciler refuses before any login.
	late := &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "late-" + randSuffix()}, Spec: *id.Spec.DeepCopy()}
	late.Spec.SecretName = late.Name
	tenant.addIdentitySecret(t, identityNamespace, late.Spec.SecretName, vcsimUser.Username())
	tenant.addCluster(t, "early", func(s *infrav1.VCenterClusterSpec) {
		s.Server, s.Thumbprint, s.CABundle = attacker.URL, "", attacker.CA
		s.IdentityRef = infrav1.VCenterIdentityReference{Kind: infrav1.VCenterClusterIdentityKind, Name: late.Name}
	})
	g.Expect(k8s.Create(ctx, late)).To(Succeed())
	waitClusterReason(t, tenant.vcCluster, infrav1.EndpointNotLentReason, "does not lend its login to "+attacker.URL)
	g.Consistently(attacker.conns.Load, 2*time.Second, 100*time.Millisecond).Should(BeZero(), "the attacker's server was contacted")
}

// lendingIdentity creates a VCenterClusterIdentity lending vcsim's login to vcsim, and a tenant
// namespace it allows.
func lendingIdentity(t *testing.T) (*infrav1.VCenterClusterIdentity, *fixture) {
	t.Helper()
	g := NewWithT(t)
	ensureNamespace(t, identityNamespace)
	tenant := newNamespace(t, watchFilter, nil)
	id := &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "lend-" + randSuffix()},
		Spec: infrav1.VCenterClusterIdentitySpec{
			ClusterIdentitySpec: infrav1.ClusterIdentitySpec{AllowedNamespaces: infrav1.AllowedNamespaces{List: []string{tenant.ns}}},
			Servers:             []infrav1.VCenterIdentityServer{{Server: "https://" + vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(vcsim.Certificate())}},
			Allowed:             lentObjects(),
		}}
	id.Spec.SecretName = id.Name
	tenant.addIdentitySecret(t, identityNamespace, id.Spec.SecretName, vcsimUser.Username())
	g.Expect(k8s.Create(ctx, id)).To(Succeed())
	g.Eventually(func(g Gomega) { // the webhook reads identities from the manager's cache
		got := &infrav1.VCenterClusterIdentity{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(id), got)).To(Succeed())
		g.Expect(got.Status.Ready).To(BeTrue(), "%+v", got.Status.Conditions)
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	return id, tenant
}

// waitClusterReason waits for HypervisorAvailable of a VCenterCluster with the reason and message.
func waitClusterReason(t *testing.T, vc *infrav1.VCenterCluster, reason, msg string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vc), got)).To(Succeed())
		c := condition(got.Status.Conditions, infrav1.HypervisorAvailableCondition)
		g.Expect(c.Reason).To(Equal(reason), "%+v", c)
		g.Expect(c.Message).To(ContainSubstring(msg))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
}

// TestHostileSecretNotALogin: a cluster naming a Secret that is no login (a TLS key of the
// tenant's namespace, as by a typo) is refused with SecretNotALogin; the Secret is not taken over,
// so deleting the cluster does not delete it, and nothing is sent with it.
func TestHostileSecretNotALogin(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newNamespace(t, watchFilter, nil)
	user := vcsimUser.Username() + "+notalogin-" + randSuffix() // tells this test's logins apart
	tlsKey := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: f.ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key"),
			"username": []byte(user), "password": []byte("p")}}
	g.Expect(k8s.Create(ctx, tlsKey)).To(Succeed())
	f.addCluster(t, "win", func(s *infrav1.VCenterClusterSpec) { s.IdentityRef.Name = tlsKey.Name })
	waitClusterReason(t, f.vcCluster, infrav1.SecretNotALoginReason, "is of type kubernetes.io/tls")
	got := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(tlsKey), got)).To(Succeed())
	g.Expect(got.OwnerReferences).To(BeEmpty(), "the cluster took the TLS Secret over")
	g.Expect(got.Labels).NotTo(HaveKey(credentials.Label))
	g.Expect(logins.of(user)).To(BeZero(), "a login was sent with the TLS Secret")
}

// TestHostileLoginAsGuestCredentials: a machine naming its cluster's vCenter login Secret as
// guestCredentialsRef is refused (GuestCredentialsMissing naming the holder): the hypervisor
// password never goes into a guest the tenant controls.
func TestHostileLoginAsGuestCredentials(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, _, ref := guestRunMachineWith(t, "win-md-0-hostile-"+randSuffix(), "vcenter-identity")
	guestSets(g, vc(g), ref, map[string]string{"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
	f.waitBootstrap(t, infrav1.GuestCredentialsMissingReason, "is the hypervisor login of VCenterCluster win")
	g.Consistently(func() int { return len(guestOps.Guest(ref.Value).Processes) }, time.Second, 100*time.Millisecond).Should(BeZero())
}

// TestHostileTemplateIsAnotherMachine: a tenant naming another tenant's running machine VM as
// its template (to boot a copy of its disk, with its keys, under its own user data) is refused:
// a pattern that the finder would resolve to it at admission, its name by the reconciler
// (InvalidSpec: a machine's VM, without saying whose), and no clone is made.
func TestHostileTemplateIsAnotherMachine(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	victim := newCluster(t, watchFilter)
	victimName := "win-md-0-victim-" + randSuffix() // the VM's name, too
	victim.addMachine(t, victimName, userData, defaultSpec())
	vm := victim.waitReason(t, infrav1.WaitingForAddressesReason)
	c := vc(g)
	victimVM := readVM(g, c, vmRef(vm.Status.VM.ID))
	g.Expect(victimVM.Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOn))

	attacker := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.Template = "/DC0/vm/win-md-0-victim-*"
	err := k8s.Create(ctx, &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: "glob-" + randSuffix(), Namespace: attacker.ns}, Spec: spec})
	g.Expect(err).To(MatchError(ContainSubstring(`spec.template: Invalid value: "/DC0/vm/win-md-0-victim-*": must not contain '*'`)))

	spec.Template = victimName
	attacker.addMachine(t, "win-md-0-attacker-"+randSuffix(), userData, spec)
	refused := attacker.waitReason(t, infrav1.InvalidSpecReason)
	g.Expect(condition(refused.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(And(
		ContainSubstring(`template "`+victimName+`"`), ContainSubstring("it is a machine's VM, not a template"), Not(ContainSubstring(victim.ns))))
	g.Expect(vmsWithUUID(g, c, string(refused.UID))).To(BeEmpty(), "a copy of the victim's VM was made")

	// Any VM that is not a template is refused too (one not made by capwin).
	plain := newCluster(t, watchFilter)
	spec.Template = "DC0_H0_VM1"
	plain.addMachine(t, "win-md-0-plainvm-"+randSuffix(), userData, spec)
	g.Expect(condition(plain.waitReason(t, infrav1.InvalidSpecReason).Status.Conditions, infrav1.VMProvisionedCondition).Message).To(
		And(ContainSubstring(`template "DC0_H0_VM1" (vm-`), ContainSubstring("is a VM, not a template")))
}

// lentObjects lends the vcsim objects of defaultSpec: its template, the datacenter's VM folder,
// the host's pool and the VM Network.
func lentObjects() infrav1.VCenterAllowed {
	return infrav1.VCenterAllowed{Templates: []string{"/DC0/vm/" + templateVM}, Folders: []string{"/DC0/vm"},
		ResourcePools: []string{"/DC0/host/DC0_H0/Resources"}, Networks: []string{"/DC0/network/VM Network"}}
}

// TestHostileVCenterResources: with the platform's login a tenant's machines may use only the
// vCenter objects the identity lends. Machines and templates naming by whole path a template,
// pool or network outside its lists are refused at admission, and so are failure domains; names
// that vCenter resolves are judged once resolved. Machines admitted before the identity existed
// are refused by the reconciler (ResourceNotLent, naming the object and the list), and nothing is
// cloned.
func TestHostileVCenterResources(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	c := vc(g)
	other, err := find.NewFinder(c).VirtualMachine(ctx, "/DC0/vm/DC0_C0_RP0_VM1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(templates.MarkVM(ctx, other)).To(Succeed()) // a template, but not one lent
	id, tenant := lendingIdentity(t)
	borrow := func(name string) func(*infrav1.VCenterClusterSpec) {
		return func(s *infrav1.VCenterClusterSpec) {
			s.IdentityRef = infrav1.VCenterIdentityReference{Kind: infrav1.VCenterClusterIdentityKind, Name: name}
		}
	}
	tenant.addCluster(t, "win", borrow(id.Name))
	admitted := tenant.vcCluster
	late := &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "late-" + randSuffix()}, Spec: *id.Spec.DeepCopy()}
	late.Spec.SecretName = late.Name
	tenant.addIdentitySecret(t, identityNamespace, late.Spec.SecretName, vcsimUser.Username())
	tenant.addCluster(t, "early", borrow(late.Name))

	cases := map[string]struct {
		mutate func(*infrav1.VCenterMachineSpec)
		field  string // refused at admission ("": a name vCenter resolves, admitted)
		msg    string
	}{
		"a template not lent": {func(s *infrav1.VCenterMachineSpec) { s.Template = "/DC0/vm/DC0_C0_RP0_VM1" },
			"spec.template", "does not lend the template /DC0/vm/DC0_C0_RP0_VM1"},
		"another pool": {func(s *infrav1.VCenterMachineSpec) { s.Placement.ResourcePool = "/DC0/host/DC0_C0/Resources" },
			"spec.placement.resourcePool", "does not lend the resource pool /DC0/host/DC0_C0/Resources"},
		"another network, by path": {func(s *infrav1.VCenterMachineSpec) { s.Network[0].NetworkName = "/DC0/network/DC0_DVPG0" },
			"spec.network", "does not lend the network /DC0/network/DC0_DVPG0"},
		"another network, by name": {func(s *infrav1.VCenterMachineSpec) { s.Network[0].NetworkName = "DC0_DVPG0" },
			"", "does not lend the network /DC0/network/DC0_DVPG0"},
	}
	spec := func(mutate func(*infrav1.VCenterMachineSpec)) infrav1.VCenterMachineSpec {
		s := defaultSpec()
		mutate(&s)
		return s
	}
	early := map[string]*infrav1.VCenterMachine{} // admitted while the identity did not exist
	for name, tc := range cases {
		tenant.addMachine(t, "win-md-0-lend-"+randSuffix(), userData, spec(tc.mutate))
		early[name] = tenant.vm
	}
	g.Expect(k8s.Create(ctx, late)).To(Succeed())

	labels := map[string]string{clusterv1.ClusterNameLabel: admitted.Name}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			tenant.vm = early[name]
			m := tenant.waitReason(t, infrav1.ResourceNotLentReason)
			g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(ContainSubstring(tc.msg))
			g.Expect(vmsWithUUID(g, c, string(m.UID))).To(BeEmpty())

			vm := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: "adm-" + randSuffix(), Namespace: tenant.ns, Labels: labels}, Spec: spec(tc.mutate)}
			tmpl := &infrav1.VCenterMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "adm-" + randSuffix(), Namespace: tenant.ns, Labels: labels},
				Spec: infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: spec(tc.mutate)}}}
			if tc.field == "" {
				g.Expect(k8s.Create(ctx, vm, client.DryRunAll)).To(Succeed())
				return
			}
			g.Expect(k8s.Create(ctx, vm, client.DryRunAll)).To(MatchError(ContainSubstring(tc.field + ": Forbidden: VCenterClusterIdentity " + id.Name + " " + tc.msg)))
			g.Expect(k8s.Create(ctx, tmpl, client.DryRunAll)).To(MatchError(ContainSubstring("spec.template." + tc.field + ": Forbidden")))
		})
	}

	fd := admitted.DeepCopy()
	fd.ObjectMeta = metav1.ObjectMeta{Name: "fd-" + randSuffix(), Namespace: tenant.ns}
	fd.Spec.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a", Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_C0/Resources"}, Networks: []string{"/DC0/network/DC0_DVPG0"}}}
	g.Expect(k8s.Create(ctx, fd, client.DryRunAll)).To(MatchError(And(
		ContainSubstring("spec.failureDomains[0].placement.resourcePool: Forbidden: VCenterClusterIdentity "+id.Name+" does not lend the resource pool /DC0/host/DC0_C0/Resources"),
		ContainSubstring("spec.failureDomains[0].networks: Forbidden"))))
}
