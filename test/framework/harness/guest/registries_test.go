package guest_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// TestRegistryMirrorAndCA boots both formats with a private registry's mirror, CA and
// credentials: the guest's containerd (containerd's own loader and resolver) pulls the pause
// image from the mirror first, trusting the CA and sending the credentials, then from the
// registry itself. The guest stops after the containerd step.
func TestRegistryMirrorAndCA(t *testing.T) {
	ca, err := os.ReadFile("../../../../bootstrap/pkg/userdata/testdata/registry-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	regs := []userdata.Registry{{Host: "registry.corp.example:5000", Mirrors: []userdata.Mirror{{
		URL:    "https://mirror.corp.example",
		Access: userdata.Access{CA: string(ca), Username: "robot", Password: "pull-secret"},
	}}}}
	for _, format := range []userdata.Format{userdata.FormatCloudConfig, userdata.FormatPowerShell} {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			data := render(t, node{format: format, name: "win-reg", token: "abcdef.0123456789abcdef",
				caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443",
				registries: regs, pause: "registry.corp.example:5000/k8s/pause:3.10"})
			g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.2",
				Channel: &recorder{}, Faults: guest.Faults{FailAt: "firewall"}, Log: testr.New(t)})
			t.Cleanup(g.Stop)
			waitDone(t, g, time.Minute)
			var stepErr *guest.StepError
			if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "firewall" {
				t.Fatalf("Err() = %v, want the injected failure at firewall (containerd started)", err)
			}
			pull := g.SandboxPull()
			var got []string
			for _, e := range pull.Endpoints {
				got = append(got, e.URL+" ca="+boolWord(e.RootCAs != nil)+" creds="+e.Credentials)
			}
			want := []string{
				"https://mirror.corp.example/v2 ca=yes creds=robot:pull-secret",
				"https://registry.corp.example:5000/v2 ca=no creds=",
			}
			if pull.Image != "registry.corp.example:5000/k8s/pause:3.10" || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("pause image %s pulled from\n%s\nwant\n%s", pull.Image, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if _, ok := g.File(`C:\Program Files\containerd\certs.d\registry.corp.example_5000_\mirror-0.crt`); !ok {
				t.Error("the mirror's CA is not on the node")
			}
		})
	}
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
