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

// TestCloudConfigTimeZoneAndAdministratorKeys boots cloud-config user data with the API's
// documented values: a Windows time zone id (cloudbase-init's own set_timezone refuses it) and
// an administrator's SSH key (cloudbase-init's users plugin puts it where OpenSSH ignores it).
// The guest stops at the features step, before anything needs a cluster.
func TestCloudConfigTimeZoneAndAdministratorKeys(t *testing.T) {
	users := []userdata.User{
		{Name: "capi", Groups: []string{"Administrators"}, SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA admin"}},
		{Name: "web", SSHAuthorizedKeys: []string{"ssh-ed25519 BBBB web"}},
	}
	data := render(t, node{format: userdata.FormatCloudConfig, name: "win-tz", token: "abcdef.0123456789abcdef",
		caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443",
		timezone: "W. Europe Standard Time", users: users})
	g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.1",
		Channel: &recorder{}, Faults: guest.Faults{FailAt: "features"}, Log: testr.New(t)})
	t.Cleanup(g.Stop)
	waitDone(t, g, time.Minute)
	var stepErr *guest.StepError
	if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "features" {
		t.Fatalf("Err() = %v, want the injected failure at features (cloudbase-init and the earlier steps succeed)", err)
	}
	if got := g.Timezone(); got != "W. Europe Standard Time" {
		t.Errorf("time zone = %q", got)
	}
	for path, want := range map[string]string{
		`C:\ProgramData\ssh\administrators_authorized_keys`: "ssh-ed25519 AAAA admin\n",
		`C:\Users\web\.ssh\authorized_keys`:                 "ssh-ed25519 BBBB web\n",
	} {
		if got, ok := g.File(path); !ok || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", path, got, ok, want)
		}
	}
}
