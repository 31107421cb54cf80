package windowsconfig_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/internal/test/adsim"
)

const (
	adOU      = "OU=Kubernetes,DC=corp,DC=example,DC=com"
	adHosts   = "CN=WebApp01 hosts,OU=Groups,DC=corp,DC=example,DC=com"
	adJoin    = "svc-join"
	adJoinPW  = "J0in-pass!"
	adClean   = "svc-cleanup"
	adCleanPW = "Cl3anup-pass!"
)

// domainController starts an in-process domain controller (LDAPS, private CA) with the OU, a
// gMSA hosts group, the join account (creates computers in the OU) and the cleanup account
// (deletes computers in the OU, writes the group's members).
func domainController(t *testing.T, opts adsim.Options) *adsim.Directory {
	t.Helper()
	d, err := adsim.Start("corp.example.com", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	d.AddOU(adOU)
	d.AddOU("OU=Groups,DC=corp,DC=example,DC=com")
	d.AddGroup(adHosts)
	d.AddUser(adsim.User{Name: adJoin, Password: adJoinPW, JoinOUs: []string{adOU}})
	d.AddUser(adsim.User{Name: adClean, Password: adCleanPW, DeleteOUs: []string{adOU}, WriteMembers: []string{adHosts}})
	return d
}

// accountFixture is a Machine whose WindowsConfig joins the domain with account cleanup and the
// hosts group, through the directory d, with the cleanup account's password.
func accountFixture(t *testing.T, d *adsim.Directory, o fixtureOpts, ou, password string, change ...func(*bootstrapv1.ActiveDirectory)) *fixture {
	t.Helper()
	o.spec.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: d.Domain, OrganizationalUnit: ou,
		Credentials: &bootstrapv1.SecretName{Name: "domain-join"}, Groups: []string{adHosts},
		ComputerAccounts: &bootstrapv1.ComputerAccounts{DeletePolicy: bootstrapv1.ComputerAccountDelete},
		Directory: &bootstrapv1.Directory{URL: d.URL, Credentials: bootstrapv1.SecretName{Name: "ad-cleanup"},
			CA: &bootstrapv1.CABundle{Secret: &bootstrapv1.SecretKey{Name: "corp-ca", Key: "ca.crt"}}}}
	for _, c := range change {
		c(o.spec.ActiveDirectory)
	}
	f := newFixture(t, o)
	g := NewWithT(t)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "domain-join", Namespace: f.ns}, Type: corev1.SecretTypeBasicAuth,
			Data: map[string][]byte{"username": []byte(`CORP\` + adJoin), "password": []byte(adJoinPW)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ad-cleanup", Namespace: f.ns}, Type: corev1.SecretTypeBasicAuth,
			Data: map[string][]byte{"username": []byte(adClean + "@corp.example.com"), "password": []byte(password)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "corp-ca", Namespace: f.ns}, Data: map[string][]byte{"ca.crt": d.CA}},
	} {
		g.Expect(k8s.Create(ctx, s)).To(Succeed())
	}
	return f
}

// named gives the Machine the Hostname address the infrastructure provider reports.
func (f *fixture) named(g Gomega, name string) {
	m := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
	m.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.21"}, {Type: clusterv1.MachineHostName, Address: name}}
	g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
}

func (f *fixture) waitAccount(t *testing.T, status metav1.ConditionStatus, reason, msg string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		c := f.condition(g, bootstrapv1.ComputerAccountReadyCondition)
		g.Expect(c.Status).To(Equal(status), "condition: %+v", c)
		g.Expect(c.Reason).To(Equal(reason), "condition: %+v", c)
		g.Expect(c.Message).To(ContainSubstring(msg))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

func (f *fixture) deleteAndWait(t *testing.T, within time.Duration) {
	t.Helper()
	g := NewWithT(t)
	cfg := f.get(g)
	g.Expect(k8s.Delete(ctx, cfg)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(cfg), cfg))
	}, within, 100*time.Millisecond).Should(BeTrue(), "config deleted")
}

// TestComputerAccountJoinGroupsDelete: the account the node's join creates is found, put in the
// gMSA hosts group (the node waits for that), and deleted with its BitLocker child when the
// Machine is deleted, over LDAPS with a private CA and over LDAP with StartTLS.
func TestComputerAccountJoinGroupsDelete(t *testing.T) {
	for name, opts := range map[string]adsim.Options{"ldaps": {}, "starttls": {StartTLS: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			d := domainController(t, opts)
			f := accountFixture(t, d, readyCluster(), adOU, adCleanPW)
			f.dataSecret(t)
			cfg := f.get(g)
			g.Expect(cfg.Finalizers).To(ContainElement("windowsconfig.bootstrap.cluster.x-k8s.io/computer-account"))
			f.waitAccount(t, metav1.ConditionFalse, bootstrapv1.WaitingForComputerAccountReason, "computer name")

			f.named(g, "WIN-ABC12")
			f.waitAccount(t, metav1.ConditionFalse, bootstrapv1.WaitingForComputerAccountReason, "No computer account WIN-ABC12$ in "+adOU)

			// The node's domain step (Add-Computer with the join account), and BitLocker's backup.
			dn, err := d.Join("WIN-ABC12", adOU, `CORP\`+adJoin, adJoinPW)
			g.Expect(err).NotTo(HaveOccurred())
			child := d.AddChild(dn, "CN=2026-12-05T02:00:00-00:00{00000000-0000-0000-0000-000000000001}", "msFVE-RecoveryInformation")
			f.waitAccount(t, metav1.ConditionTrue, bootstrapv1.ComputerAccountFoundReason, dn)
			g.Expect(d.Members(adHosts)).To(Equal([]string{dn}))
			// CAPI's patch helper writes the conditions before the rest of the status.
			var st *bootstrapv1.ActiveDirectoryStatus
			g.Eventually(func() *bootstrapv1.ActiveDirectoryStatus {
				st = f.get(g).Status.ActiveDirectory
				return st
			}, 10*time.Second, 100*time.Millisecond).ShouldNot(BeNil())
			g.Expect(st.DistinguishedName).To(Equal(dn))
			g.Expect(st.ObjectGUID).To(HaveLen(36))
			g.Expect(ptr.Deref(st.CreatedByJoin, false)).To(BeTrue())

			f.deleteAndWait(t, 20*time.Second)
			g.Expect(d.Get(dn)).To(BeNil(), "account deleted")
			g.Expect(d.Get(child)).To(BeNil(), "with its child")
			g.Expect(d.Members(adHosts)).To(BeEmpty())
		})
	}
}

// TestStaleComputerAccountIsNotTouched: an account older than the Machine is another computer's
// or a deleted node's: it is not put in the group, and the Machine's deletion leaves it.
func TestStaleComputerAccountIsNotTouched(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	d := domainController(t, adsim.Options{})
	dn := d.AddComputer("WIN-OLD01", adOU, time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC))
	f := accountFixture(t, d, readyCluster(), adOU, adCleanPW)
	f.dataSecret(t)
	f.named(g, "WIN-OLD01")
	f.waitAccount(t, metav1.ConditionFalse, bootstrapv1.StaleComputerAccountReason, "created 2025-03-01T08:00:00Z, before this Machine")
	g.Eventually(func(g Gomega) {
		g.Expect(warningEvents(g, f, bootstrapv1.StaleComputerAccountReason)).NotTo(BeEmpty())
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(d.Members(adHosts)).To(BeEmpty())
	f.deleteAndWait(t, 20*time.Second)
	g.Expect(d.Get(dn)).NotTo(BeNil(), "not capwin's account")
}

// TestComputerAccountCleanupIsBounded: wrong cleanup credentials or a missing OU are said in the
// condition, and the Machine's deletion goes on after the cleanup timeout with a Warning event
// naming the account.
func TestComputerAccountCleanupIsBounded(t *testing.T) {
	cases := map[string]struct{ ou, password, want string }{
		"wrong password": {adOU, "wrong", "the user name or password is wrong (LDAP 49)"},
		"OU missing":     {"OU=Gone,DC=corp,DC=example,DC=com", adCleanPW, "searching OU=Gone,DC=corp,DC=example,DC=com: it does not exist (LDAP 32)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			d := domainController(t, adsim.Options{})
			o := readyCluster()
			o.shortJoinTimeout = true // the manager with the short cleanup timeout
			f := accountFixture(t, d, o, tc.ou, tc.password)
			f.dataSecret(t)
			f.named(g, "WIN-XYZ34")
			_, err := d.Join("WIN-XYZ34", adOU, `CORP\`+adJoin, adJoinPW)
			g.Expect(err).NotTo(HaveOccurred())
			f.waitAccount(t, metav1.ConditionFalse, bootstrapv1.DirectoryNotAvailableReason, tc.want)
			start := time.Now()
			f.deleteAndWait(t, 30*time.Second)
			g.Expect(time.Since(start)).To(BeNumerically(">=", shortCleanupTimeout-time.Second), "retried until the timeout")
			g.Expect(warningEvents(g, f, bootstrapv1.ComputerAccountNotDeletedReason)).To(ContainElement(ContainSubstring("Gave up after 3s on computer account")))
			g.Expect(d.Computer("WIN-XYZ34")).NotTo(BeNil(), "left for the operator")
		})
	}
}

// TestDirectoryRefusesAHypervisorLogin: a tenant cannot point the directory credentials at the
// hypervisor login a cluster holds: its password is never sent to the tenant's LDAP server.
func TestDirectoryRefusesAHypervisorLogin(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	d := domainController(t, adsim.Options{})
	f := accountFixture(t, d, readyCluster(), adOU, adCleanPW)
	login := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "ad-cleanup"}, login)).To(Succeed())
	login.Labels = map[string]string{"infrastructure.cluster.x-k8s.io/credentials": "true"}
	g.Expect(k8s.Update(ctx, login)).To(Succeed())
	f.dataSecret(t)
	f.named(g, "WIN-ABC12")
	f.waitAccount(t, metav1.ConditionFalse, bootstrapv1.DirectoryNotAvailableReason, "is the hypervisor login of")
}

// TestKeptAccountLeavesTheGroups: with deletePolicy Keep the Machine's deletion keeps the account
// and takes it out of the groups capwin put it in.
func TestKeptAccountLeavesTheGroups(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	d := domainController(t, adsim.Options{})
	f := accountFixture(t, d, readyCluster(), adOU, adCleanPW, func(a *bootstrapv1.ActiveDirectory) {
		a.ComputerAccounts.DeletePolicy = bootstrapv1.ComputerAccountKeep
	})
	f.dataSecret(t)
	f.named(g, "WIN-KEEP1")
	dn, err := d.Join("WIN-KEEP1", adOU, `CORP\`+adJoin, adJoinPW)
	g.Expect(err).NotTo(HaveOccurred())
	f.waitAccount(t, metav1.ConditionTrue, bootstrapv1.ComputerAccountFoundReason, dn)
	g.Expect(d.Members(adHosts)).To(Equal([]string{dn}))
	f.deleteAndWait(t, 20*time.Second)
	g.Expect(d.Get(dn)).NotTo(BeNil(), "kept")
	g.Expect(d.Members(adHosts)).To(BeEmpty(), "out of the group")
}
