package directory_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/bootstrap/pkg/directory"
	"github.com/capwin/capwin/internal/test/adsim"
)

const (
	ou    = "OU=Kubernetes,DC=corp,DC=example,DC=com"
	hosts = "CN=WebApp01 hosts,OU=Groups,DC=corp,DC=example,DC=com"
	other = "CN=Domain Admins,CN=Users,DC=corp,DC=example,DC=com"
)

// domain starts a directory with the OU, two groups, and the cleanup account, which may delete
// computers in the OU and write the members of the hosts group only.
func domain(t *testing.T, opts adsim.Options) *adsim.Directory {
	t.Helper()
	d, err := adsim.Start("corp.example.com", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	d.AddOU(ou)
	d.AddOU("OU=Groups,DC=corp,DC=example,DC=com")
	d.AddOU("CN=Users,DC=corp,DC=example,DC=com")
	d.AddGroup(hosts)
	d.AddGroup(other)
	d.AddUser(adsim.User{Name: "svc-cleanup", Password: "Cl3anup!", DeleteOUs: []string{ou}, WriteMembers: []string{hosts}})
	return d
}

func config(d *adsim.Directory) directory.Config {
	return directory.Config{URL: d.URL, CA: d.CA, Username: `CORP\svc-cleanup`, Password: "Cl3anup!", Timeout: 5 * time.Second}
}

func TestAccountLifecycle(t *testing.T) {
	for _, opts := range []adsim.Options{{}, {StartTLS: true}} {
		g := NewWithT(t)
		d := domain(t, opts)
		dn := d.AddComputer("WIN-ABC12", ou, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
		child := d.AddChild(dn, "CN=2026-12-01T10:00:00-08:00{6A3F9E1B-0000-0000-0000-000000000000}", "msFVE-RecoveryInformation")

		c, err := directory.Dial(config(d))
		g.Expect(err).NotTo(HaveOccurred(), d.URL)
		defer c.Close()

		a, err := c.FindComputer(ou, "win-abc12")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(a).NotTo(BeNil())
		g.Expect(a.DN).To(Equal(dn))
		g.Expect(a.Created).To(Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)))
		g.Expect(a.GUID).To(HaveLen(36))
		byGUID, err := c.ComputerByGUID(ou, a.GUID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(byGUID.DN).To(Equal(dn))

		missing, err := c.FindComputer(ou, "WIN-NONE1")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(missing).To(BeNil())

		// Membership: twice is no error (permissive modify), both ways.
		g.Expect(c.AddMember(hosts, dn)).To(Succeed())
		g.Expect(c.AddMember(hosts, dn)).To(Succeed())
		g.Expect(d.Members(hosts)).To(Equal([]string{dn}))
		again, err := c.FindComputer(ou, "WIN-ABC12")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again.MemberOf).To(Equal([]string{hosts}))
		g.Expect(c.RemoveMember(hosts, dn)).To(Succeed())
		g.Expect(c.RemoveMember(hosts, dn)).To(Succeed())
		g.Expect(d.Members(hosts)).To(BeEmpty())

		// Least privilege: another group's members cannot be written.
		err = c.AddMember(other, dn)
		g.Expect(err).To(MatchError(ContainSubstring("access denied (LDAP 50): the account needs Write Members")))

		// Delete takes the BitLocker child with it (tree delete); twice is no error.
		g.Expect(c.AddMember(hosts, dn)).To(Succeed())
		g.Expect(c.Delete(dn)).To(Succeed())
		g.Expect(d.Get(dn)).To(BeNil())
		g.Expect(d.Get(child)).To(BeNil())
		g.Expect(d.Members(hosts)).To(BeEmpty(), "a deleted account leaves its groups")
		g.Expect(c.Delete(dn)).To(Succeed())
	}
}

func TestDeleteOutsideTheOU(t *testing.T) {
	g := NewWithT(t)
	d := domain(t, adsim.Options{})
	dn := d.AddComputer("DC01", "OU=Groups,DC=corp,DC=example,DC=com", time.Now())
	c, err := directory.Dial(config(d))
	g.Expect(err).NotTo(HaveOccurred())
	defer c.Close()
	g.Expect(c.Delete(dn)).To(MatchError(ContainSubstring("access denied (LDAP 50)")))
	g.Expect(d.Get(dn)).NotTo(BeNil())
}

func TestDialErrors(t *testing.T) {
	d := domain(t, adsim.Options{})
	other := domain(t, adsim.Options{}) // another private CA
	cases := map[string]struct {
		change func(*directory.Config)
		want   string
	}{
		"wrong password":        {func(c *directory.Config) { c.Password = "nope" }, `bind as CORP\svc-cleanup: the user name or password is wrong (LDAP 49)`},
		"unknown user":          {func(c *directory.Config) { c.Username = "mallory@corp.example.com" }, "(LDAP 49)"},
		"empty password":        {func(c *directory.Config) { c.Password = "" }, "username and password are required"},
		"CA of another":         {func(c *directory.Config) { c.CA = other.CA }, "certificate signed by unknown authority"},
		"no CA (system roots)":  {func(c *directory.Config) { c.CA = nil }, "certificate signed by unknown authority"},
		"not PEM":               {func(c *directory.Config) { c.CA = []byte("junk") }, "no PEM certificate"},
		"http url":              {func(c *directory.Config) { c.URL = "http://" + strings.TrimPrefix(d.URL, "ldaps://") }, "want ldaps://HOST[:PORT]"},
		"nothing listening":     {func(c *directory.Config) { c.URL = "ldaps://127.0.0.1:1" }, "connecting to ldaps://127.0.0.1:1"},
		"ldap to an ldaps port": {func(c *directory.Config) { c.URL = "ldap://" + strings.TrimPrefix(d.URL, "ldaps://") }, "StartTLS with"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := config(d)
			tc.change(&cfg)
			c, err := directory.Dial(cfg)
			if err == nil {
				c.Close()
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestMissingOU(t *testing.T) {
	g := NewWithT(t)
	d := domain(t, adsim.Options{})
	c, err := directory.Dial(config(d))
	g.Expect(err).NotTo(HaveOccurred())
	defer c.Close()
	_, err = c.FindComputer("OU=Gone,DC=corp,DC=example,DC=com", "WIN-ABC12")
	g.Expect(err).To(MatchError(ContainSubstring("searching OU=Gone,DC=corp,DC=example,DC=com: it does not exist (LDAP 32)")))
	g.Expect(c.AddMember("CN=Gone,DC=corp,DC=example,DC=com", "CN=X,"+ou)).To(MatchError(ContainSubstring("the group does not exist")))
}

// TestNamesAreNotFilters: a computer name is escaped in the search filter, so a name such as *
// or one that closes the filter matches no other account.
func TestNamesAreNotFilters(t *testing.T) {
	g := NewWithT(t)
	d := domain(t, adsim.Options{})
	d.AddComputer("WIN-ABC12", ou, time.Now())
	c, err := directory.Dial(config(d))
	g.Expect(err).NotTo(HaveOccurred())
	defer c.Close()
	for _, name := range []string{"*", "WIN-ABC12$)(objectCategory=*", `WIN-ABC12\2a`} {
		a, err := c.FindComputer(ou, name)
		g.Expect(err).NotTo(HaveOccurred(), name)
		g.Expect(a).To(BeNil(), name)
	}
	_, err = c.ComputerByGUID(ou, "not-a-guid")
	g.Expect(err).To(MatchError(ContainSubstring("not a GUID")))
}
