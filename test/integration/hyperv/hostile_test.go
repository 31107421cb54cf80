package hyperv_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// The hostile-tenant suite (Hyper-V): a tenant of a namespace a HyperVClusterIdentity allows
// tries to make capwin act outside what the platform lends. Each attack is refused with a message
// that says what and why, and nothing reaches the attacker.

// TestHostileHyperVEndpoint: the identity's login goes to its listed hosts, reached its way only.
// A tenant naming its own WinRM endpoint (another port of a listed address, a name the identity
// does not list), Basic auth, its own CA or no verification is refused at admission; a cluster
// admitted before the identity existed is refused by the reconciler. The attacker's endpoint,
// which would accept the platform's login, never gets a request.
func TestHostileHyperVEndpoint(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	attacker, err := hypervsim.NewHost("evil", 131072, []string{vswitch}, nil).Serve(map[string]string{hostUser: hostPassword})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(attacker.Close)
	id, ns := lendingIdentity(t)
	listed := hosts[0]
	lentHost := func() infrav1.HyperVHost {
		return infrav1.HyperVHost{Name: "h", Address: listed.srv.Host, Port: int32(listed.srv.Port)} //nolint:gosec // G115: a TCP port, below 2^16
	}
	borrower := func(h infrav1.HyperVHost) *infrav1.HyperVCluster {
		return &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "attack-" + randSuffix(), Namespace: ns},
			Spec: infrav1.HyperVClusterSpec{VirtualSwitch: vswitch, Hosts: []infrav1.HyperVHost{h},
				CredentialsRef: infrav1.HyperVIdentityReference{Kind: infrav1.HyperVClusterIdentityKind, Name: id.Name}}}
	}
	for name, tc := range map[string]struct {
		mutate func(*infrav1.HyperVHost)
		field  string
		msg    string
	}{
		"own endpoint on a listed address": {func(h *infrav1.HyperVHost) { h.Port = int32(attacker.Port) }, //nolint:gosec // G115: a TCP port, below 2^16
			"spec.hosts[0].port", "on port"},
		"own endpoint by a name not listed": {func(h *infrav1.HyperVHost) { h.Address, h.Port = "localhost", int32(attacker.Port) }, //nolint:gosec // G115: a TCP port, below 2^16
			"spec.hosts[0].address", "does not lend its login to localhost"},
		"Basic, to read the password": {func(h *infrav1.HyperVHost) { h.AuthType = infrav1.WinRMAuthBasic },
			"spec.hosts[0].authType", "with authType NTLM only"},
		"own CA": {func(h *infrav1.HyperVHost) { h.CABundle = attacker.CACertPEM() },
			"spec.hosts[0].caBundle", "is not the CA bundle"},
		"no verification": {func(h *infrav1.HyperVHost) { h.InsecureSkipTLSVerify = true },
			"spec.hosts[0].insecureSkipTLSVerify", "only with certificate verification"},
	} {
		t.Run(name, func(t *testing.T) {
			h := lentHost()
			tc.mutate(&h)
			err := k8s.Create(ctx, borrower(h))
			NewWithT(t).Expect(err).To(MatchError(And(ContainSubstring(tc.field+": Forbidden"), ContainSubstring(tc.msg),
				ContainSubstring("HyperVClusterIdentity "+id.Name))))
		})
	}

	// Admitted while the identity did not exist: the reconciler refuses before any login.
	late := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "late-" + randSuffix()}, Spec: *id.Spec.DeepCopy()}
	late.Spec.SecretName = late.Name
	identitySecret(t, late.Name)
	f := newCluster(t, func(s *infrav1.HyperVClusterSpec) {
		h := lentHost()
		h.Port = int32(attacker.Port) //nolint:gosec // G115: a TCP port, below 2^16
		s.Hosts = []infrav1.HyperVHost{h}
		s.CredentialsRef = infrav1.HyperVIdentityReference{Kind: infrav1.HyperVClusterIdentityKind, Name: late.Name}
	})
	late.Spec.AllowedNamespaces.List = []string{f.ns}
	g.Expect(k8s.Create(ctx, late)).To(Succeed())
	waitHostsReason(t, f.hc, infrav1.EndpointNotLentReason, "lends its login to "+listed.srv.Host+" on port")
	g.Consistently(func() int64 { return attacker.Stats().Requests }, 2*time.Second, 100*time.Millisecond).Should(BeZero(),
		"the attacker's endpoint was contacted")
}

// lendingIdentity creates a HyperVClusterIdentity lending the hosts' login to the suite's hosts,
// and a tenant namespace it allows.
func lendingIdentity(t *testing.T) (*infrav1.HyperVClusterIdentity, string) {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	id := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "lend-" + randSuffix()},
		Spec: infrav1.HyperVClusterIdentitySpec{
			ClusterIdentitySpec: infrav1.ClusterIdentitySpec{AllowedNamespaces: infrav1.AllowedNamespaces{List: []string{ns.Name}}},
			Hosts:               lentHosts(),
			Allowed:             lentResources(),
		}}
	id.Spec.SecretName = id.Name
	identitySecret(t, id.Name)
	g.Expect(k8s.Create(ctx, id)).To(Succeed())
	g.Eventually(func(g Gomega) { // the webhook reads identities from the manager's cache
		got := &infrav1.HyperVClusterIdentity{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(id), got)).To(Succeed())
		g.Expect(got.Status.Ready).To(BeTrue(), "%+v", got.Status.Conditions)
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	return id, ns.Name
}

// identitySecret creates the hosts' login as a Secret in the manager's namespace.
func identitySecret(t *testing.T, name string) {
	t.Helper()
	g := NewWithT(t)
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identityNamespace}})
	g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: identityNamespace},
		Data:       map[string][]byte{"username": []byte(hostUser), "password": []byte(hostPassword)},
	})).To(Succeed())
}

// TestHostileHyperVResources: with the platform's login a tenant may use only the host resources
// the identity lends. A cluster putting its VMs in a system folder is refused at admission, and
// one admitted before the identity existed is refused before its hosts are probed (which would
// create the folder). Machines and machine templates naming another VM's disk as parent, a share
// of their own as parent disk source (the host's computer account would log on to it), a switch
// or a VLAN not lent are refused at admission; machines admitted before the identity existed are
// refused by the reconciler (ResourceNotLent), and nothing is made or copied.
func TestHostileHyperVResources(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	idName := "lend-" + randSuffix()
	borrow := func(s *infrav1.HyperVClusterSpec) {
		for i := range s.Hosts {
			s.Hosts[i].CredentialsRef = infrav1.SecretReference{}
		}
		s.CredentialsRef = infrav1.HyperVIdentityReference{Kind: infrav1.HyperVClusterIdentityKind, Name: idName}
	}
	f := newCluster(t, borrow)
	system := newCluster(t, func(s *infrav1.HyperVClusterSpec) { borrow(s); s.VMPath = `C:\Windows\System32` })
	cases := map[string]struct {
		mutate func(*infrav1.HyperVMachineSpec)
		field  string
		msg    string
	}{
		"another VM's disk as parent": {func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\ProgramData\capwin\disks\6c1f0b6e.vhdx` },
			"parentDisk", `does not lend the parent disk C:\ProgramData\capwin\disks\6c1f0b6e.vhdx`},
		"own share as source (coercion)": {func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", &infrav1.HyperVParentDiskSource{URL: `\\tenant-vm\s\x.vhdx`, SHA256: strings.Repeat("a", 64)}
		}, "parentDiskSource.url", `does not lend copies from \\tenant-vm\s\x.vhdx`},
		"foreign switch": {func(s *infrav1.HyperVMachineSpec) { s.Network[0].NetworkName = "mgmt" }, "network[0].networkName", "does not lend the switch mgmt"},
		"foreign VLAN":   {func(s *infrav1.HyperVMachineSpec) { s.Network[0].VLANID = ptr.To[int32](5) }, "network[0].vlanID", "does not lend VLAN 5"},
	}
	spec := func(mutate func(*infrav1.HyperVMachineSpec)) infrav1.HyperVMachineSpec {
		s := defaultSpec()
		mutate(&s)
		return s
	}
	early := map[string]*machine{} // admitted while the identity did not exist
	for name, tc := range cases {
		early[name] = f.addMachine(t, "win-hostile-"+randSuffix(), "", userData, spec(tc.mutate))
	}

	identitySecret(t, idName)
	id := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: idName}, Spec: infrav1.HyperVClusterIdentitySpec{
		ClusterIdentitySpec: infrav1.ClusterIdentitySpec{SecretName: idName, AllowedNamespaces: infrav1.AllowedNamespaces{List: []string{f.ns, system.ns}}},
		Hosts:               lentHosts(), Allowed: lentResources()}}
	g.Expect(k8s.Create(ctx, id)).To(Succeed())
	f.provisioned(t)
	waitHostsReason(t, system.hc, infrav1.ResourceNotLentReason, `does not lend the folder C:\Windows\System32`)
	for _, h := range hosts {
		for _, p := range h.Files() {
			g.Expect(strings.ToLower(p)).NotTo(HavePrefix(`c:\windows\system32\`), "a folder was made in the host's system folder")
		}
	}
	g.Eventually(func() error { // admission, once the webhook's cache has the identity
		hc := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "sys-" + randSuffix(), Namespace: f.ns}, Spec: *f.hc.Spec.DeepCopy()}
		hc.Spec.VMPath = `C:\Windows\System32`
		return k8s.Create(ctx, hc, client.DryRunAll)
	}, 10*time.Second, 50*time.Millisecond).Should(MatchError(ContainSubstring(`spec.vmPath: Forbidden: HyperVClusterIdentity ` + idName + ` does not lend the folder`)))

	labels := map[string]string{clusterv1.ClusterNameLabel: f.cluster.Name}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			m := early[name].waitReason(t, infrav1.ResourceNotLentReason)
			g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(ContainSubstring(tc.msg))
			for _, h := range hosts {
				_, made := vmOf(h.Host, string(m.UID))
				g.Expect(made).To(BeFalse(), "a VM was made on %s", h.Name)
			}
			hvm := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Name: "adm-" + randSuffix(), Namespace: f.ns, Labels: labels}, Spec: spec(tc.mutate)}
			g.Expect(k8s.Create(ctx, hvm, client.DryRunAll)).To(MatchError(ContainSubstring("spec." + tc.field + ": Forbidden: HyperVClusterIdentity " + idName + " " + tc.msg)))
			tmpl := &infrav1.HyperVMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "adm-" + randSuffix(), Namespace: f.ns, Labels: labels},
				Spec: infrav1.HyperVMachineTemplateSpec{Template: infrav1.HyperVMachineTemplateResource{Spec: spec(tc.mutate)}}}
			g.Expect(k8s.Create(ctx, tmpl, client.DryRunAll)).To(MatchError(ContainSubstring("spec.template.spec." + tc.field + ": Forbidden")))
		})
	}
	for _, h := range hosts {
		g.Expect(h.ParentCopies(strings.Repeat("a", 64))).To(BeZero(), "host %s copied from the tenant's share", h.Name)
	}
	// What the identity lends is admitted.
	lent := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Name: "adm-" + randSuffix(), Namespace: f.ns, Labels: labels}, Spec: defaultSpec()}
	g.Expect(k8s.Create(ctx, lent, client.DryRunAll)).To(Succeed())
}
