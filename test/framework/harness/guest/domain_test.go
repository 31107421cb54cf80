package guest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/bootstrap/pkg/directory"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/test/adsim"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

const testOU = "OU=Kubernetes,DC=corp,DC=example,DC=com"

// TestDomainJoin boots both formats with an Active Directory join: the computer account appears
// in the OU, the guest restarts once and the script goes on past the domain step; with a wrong
// password the domain step fails with Add-Computer's words and no account is made.
func TestDomainJoin(t *testing.T) {
	for _, format := range []userdata.Format{userdata.FormatCloudConfig, userdata.FormatPowerShell} {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			dc := &guest.DomainController{Name: "corp.example.com", Address: "10.9.0.53", Username: `CORP\svc-join`, Password: "j0in!", OUs: []string{testOU}}
			g, rec := bootDomainGuest(t, format, dc, "j0in!")
			var stepErr *guest.StepError
			if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "firewall" {
				t.Fatalf("Err() = %v, want the injected failure at firewall (the domain step succeeded)", err)
			}
			if got := dc.Accounts(); len(got) != 1 || got["WIN-AD-1"] != testOU {
				t.Errorf("computer accounts %v, want WIN-AD-1 in %s", got, testOU)
			}
			_, reports, _ := rec.snapshot()
			if steps := reportSteps(reports); !strings.Contains(steps, "domain:Running domain:Rebooting preflight:Running domain:Running domainGroups:Running users:Running") {
				t.Errorf("reports %s: want one restart after the domain join, then the next step", steps)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		dc := &guest.DomainController{Name: "corp.example.com", Address: "10.9.0.53", Username: `CORP\svc-join`, Password: "j0in!", OUs: []string{testOU}}
		g, _ := bootDomainGuest(t, userdata.FormatPowerShell, dc, "wrong")
		var stepErr *guest.StepError
		if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "domain" || !strings.Contains(err.Error(), "The user name or password is incorrect") {
			t.Fatalf("Err() = %v, want the domain step refused for the password", err)
		}
		if strings.Contains(g.Err().Error(), "wrong") {
			t.Error("the error shows the password")
		}
		if got := dc.Accounts(); len(got) != 0 {
			t.Errorf("computer accounts %v after a refused join", got)
		}
	})
}

func bootDomainGuest(t *testing.T, format userdata.Format, dc *guest.DomainController, password string) (*guest.Guest, *recorder) {
	t.Helper()
	return bootDomainGuestWith(t, format, dc, &userdata.Domain{Name: "corp.example.com", OrganizationalUnit: testOU, DNSServers: []string{"10.9.0.53"},
		Username: `CORP\svc-join`, Password: password})
}

func bootDomainGuestWith(t *testing.T, format userdata.Format, dc *guest.DomainController, d *userdata.Domain, beside ...func(*guest.Guest)) (*guest.Guest, *recorder) {
	t.Helper()
	data := render(t, node{format: format, name: "win-ad-1", token: "abcdef.0123456789abcdef",
		caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443", domain: d})
	rec := &recorder{}
	g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.3", Hostname: "win-ad-1",
		Channel: rec, Domain: dc, Faults: guest.Faults{FailAt: "firewall"}, Log: testr.New(t)})
	t.Cleanup(g.Stop)
	for _, f := range beside {
		go f(g)
	}
	waitDone(t, g, time.Minute)
	return g, rec
}

// servedDomain is a domain controller whose accounts live in an LDAPS directory (adsim).
func servedDomain(t *testing.T) (*guest.DomainController, *adsim.Directory) {
	t.Helper()
	dc := &guest.DomainController{Name: "corp.example.com", Address: "10.9.0.53", Username: `CORP\svc-join`, Password: "j0in!", OUs: []string{testOU}}
	dir, err := dc.Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dir.Stop)
	return dc, dir
}

// TestDomainStaleAccount: an account of the computer's name older than the Machine stops the
// domain step, naming it, unless reuse is allowed; an account made since (this Machine's earlier
// join, before its VM was made again) is used.
func TestDomainStaleAccount(t *testing.T) {
	machineCreated := time.Now().Add(-time.Minute).UTC()
	cases := []struct {
		name    string
		created time.Time
		reuse   bool
		refused bool
	}{
		{"stale account refused", time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC), false, true},
		{"stale account reused when allowed", time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC), true, false},
		{"this Machine's own account", machineCreated.Add(30 * time.Second), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dc, dir := servedDomain(t)
			dn := dir.AddComputer("WIN-AD-1", testOU, tc.created)
			g, _ := bootDomainGuestWith(t, userdata.FormatPowerShell, dc, &userdata.Domain{Name: "corp.example.com", OrganizationalUnit: testOU,
				Username: `CORP\svc-join`, Password: "j0in!", ReuseAccount: tc.reuse, AccountNotBefore: machineCreated})
			var stepErr *guest.StepError
			if !errors.As(g.Err(), &stepErr) {
				t.Fatalf("Err() = %v", g.Err())
			}
			if tc.refused {
				if stepErr.Step != "domain" || !strings.Contains(g.Err().Error(), "the domain already has a computer account named WIN-AD-1 ("+dn+", created 2025-03-01 08:00:00Z), older than this Machine") {
					t.Fatalf("Err() = %v, want the domain step to refuse the stale account", g.Err())
				}
				return
			}
			if stepErr.Step != "firewall" {
				t.Fatalf("Err() = %v, want the injected failure at firewall (the join used the account)", g.Err())
			}
			if got := dir.Computers(); len(got) != 1 || got[0] != dn {
				t.Errorf("accounts %v, want only %s", got, dn)
			}
		})
	}
}

// TestDomainGroups: after the join's restart the script waits until its account is in the
// groups (the bootstrap manager adds it), then goes on.
func TestDomainGroups(t *testing.T) {
	const hosts = "CN=WebApp01 hosts,DC=corp,DC=example,DC=com"
	dc, dir := servedDomain(t)
	dir.AddGroup(hosts)
	dir.AddUser(adsim.User{Name: "svc-cleanup", Password: "c", WriteMembers: []string{hosts}})
	g, rec := bootDomainGuestWith(t, userdata.FormatPowerShell, dc, &userdata.Domain{Name: "corp.example.com", OrganizationalUnit: testOU,
		Username: `CORP\svc-join`, Password: "j0in!", Groups: []string{hosts}, AccountNotBefore: time.Now().Add(-time.Minute)}, func(g *guest.Guest) {
		// The bootstrap manager's part, once the script waits for it.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			log, _ := g.File(userdata.LogFile)
			if strings.Contains(string(log), "[domainGroups] waiting for the bootstrap manager to add WIN-AD-1") {
				break
			}
			if time.Now().After(deadline) {
				return // the script never waited: the reports below say so
			}
		}
		c, err := directory.Dial(directory.Config{URL: dir.URL, CA: dir.CA, Username: "svc-cleanup@corp.example.com", Password: "c"})
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		if err := c.AddMember(hosts, dir.Computer("WIN-AD-1").DN); err != nil {
			t.Error(err)
		}
	})
	var stepErr *guest.StepError
	if !errors.As(g.Err(), &stepErr) || stepErr.Step != "firewall" {
		t.Fatalf("Err() = %v, want the injected failure at firewall (past domainGroups)", g.Err())
	}
	_, reports, _ := rec.snapshot()
	if steps := reportSteps(reports); !strings.Contains(steps, "domain:Rebooting preflight:Running domain:Running domainGroups:Running domainGroups:Running users:Running") {
		t.Errorf("reports %s: want domainGroups to wait after the restart", steps)
	}
	log, _ := g.File(userdata.LogFile)
	if !strings.Contains(string(log), "[domainGroups] member of "+hosts+"; the computer's Kerberos tickets were purged") {
		t.Errorf("bootstrap log:\n%s", log)
	}
}
