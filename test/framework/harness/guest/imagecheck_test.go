package guest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// A guest given the image check's script instead of a bootstrap answers with one report through
// the status channel, as imagecheck.ps1 does, and joins nothing: Succeeded for an image that has
// what the check asks, Failed naming each missing part otherwise.
func TestImageCheck(t *testing.T) {
	data, err := userdata.ImageCheckScript(userdata.NewImageCheck("v1.36.3", true))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		image     guest.Image
		state     string
		message   []string
		inventory []string
	}{
		{name: "complete", state: guest.StateSucceeded, message: []string{"the image has what a capwin node needs"},
			inventory: []string{"windows=20348", "cloudbase-init=1.1.8", "metadata-services=VMwareGuestInfoService", "feature-containers=Installed", "kubelet=1.36.3", "vmware-tools=running"}},
		{name: "lacking", image: guest.Image{CloudbaseInit: "1.1.4", MissingFeatures: []string{"Containers"}, Kubelet: "1.35.4", FreeGiB: 8},
			state:     guest.StateFailed,
			message:   []string{"cloudbase-init 1.1.5 or later", "the Windows feature Containers", `kubelet.exe v1.36.3 in C:\k`, "20 GiB free on C: (has 8)"},
			inventory: []string{"cloudbase-init=1.1.4", "feature-containers=Available", "kubelet=1.35.4", "free-gib=8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.9", Channel: rec, Image: tc.image})
			waitDone(t, g, 30*time.Second)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			_, reports, errs := rec.snapshot()
			if len(errs) > 0 || len(reports) != 1 {
				t.Fatalf("reports %+v, errors %v: want one report", reports, errs)
			}
			r := reports[0]
			if r.Step != userdata.ImageCheckStep || r.State != tc.state {
				t.Errorf("report %s %s, want %s %s", r.Step, r.State, userdata.ImageCheckStep, tc.state)
			}
			for _, m := range tc.message {
				if !strings.Contains(r.Message, m) {
					t.Errorf("message %q lacks %q", r.Message, m)
				}
			}
			for _, line := range tc.inventory {
				if !strings.Contains(r.LogTail+"\n", line+"\n") {
					t.Errorf("inventory %q lacks %q", r.LogTail, line)
				}
			}
			if g.NodeName() != "" {
				t.Errorf("the guest named a node (%s): the image check joins nothing", g.NodeName())
			}
		})
	}
}
