package guest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
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
			if steps := reportSteps(reports); !strings.Contains(steps, "domain:Running domain:Rebooting preflight:Running domain:Running users:Running") {
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
	data := render(t, node{format: format, name: "win-ad-1", token: "abcdef.0123456789abcdef",
		caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443",
		domain: &userdata.Domain{Name: "corp.example.com", OrganizationalUnit: testOU, DNSServers: []string{"10.9.0.53"},
			Username: `CORP\svc-join`, Password: password}})
	rec := &recorder{}
	g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.3", Hostname: "win-ad-1",
		Channel: rec, Domain: dc, Faults: guest.Faults{FailAt: "firewall"}, Log: testr.New(t)})
	t.Cleanup(g.Stop)
	waitDone(t, g, time.Minute)
	return g, rec
}
