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
	regs := mirroredRegistry(t)
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

// mirroredRegistry is a private registry with a mirror that has its own CA and credentials.
func mirroredRegistry(t *testing.T) []userdata.Registry {
	t.Helper()
	ca, err := os.ReadFile("../../../../bootstrap/pkg/userdata/testdata/registry-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	return []userdata.Registry{{Host: "registry.corp.example:5000", Mirrors: []userdata.Mirror{{
		URL:    "https://mirror.corp.example",
		Access: userdata.Access{CA: string(ca), Username: "robot", Password: "pull-secret"},
	}}}}
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestPrePull boots a node that pre-pulls three images, one of them from the private registry
// through its mirror: each pull is reported as a step of the bootstrap, each goes where
// containerd's resolver sends it (the mirror first, with the CA and credentials), and an image
// that cannot be pulled is logged while the bootstrap goes on. The guest stops after the files
// step, which comes after prePull.
func TestPrePull(t *testing.T) {
	regs := mirroredRegistry(t)
	images := []string{"mcr.microsoft.com/windows/servercore:ltsc2022", "registry.corp.example:5000/iis/app:1.4", "busybox"}
	rec := &recorder{}
	data := render(t, node{format: userdata.FormatCloudConfig, name: "win-pull", token: "abcdef.0123456789abcdef",
		caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443", registries: regs,
		prePull: &userdata.PrePull{Images: images, TimeoutSeconds: 600}})
	g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.3", Channel: rec,
		Faults: guest.Faults{FailAt: "files", UnpullableImages: []string{"docker.io/library/busybox:latest"}}, Log: testr.New(t)})
	t.Cleanup(g.Stop)
	waitDone(t, g, time.Minute)
	var stepErr *guest.StepError
	if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "files" {
		t.Fatalf("Err() = %v, want the injected failure at files (prePull done)", err)
	}
	var got []string
	for _, p := range g.PrePulled() {
		got = append(got, p.Image+" from "+p.Endpoints[0].URL+" creds="+p.Endpoints[0].Credentials)
	}
	want := []string{
		"mcr.microsoft.com/windows/servercore:ltsc2022 from https://mcr.microsoft.com/v2 creds=",
		"registry.corp.example:5000/iis/app:1.4 from https://mirror.corp.example/v2 creds=robot:pull-secret",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pre-pulled\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, reports, _ := rec.snapshot()
	var pulls []string
	for _, r := range reports {
		if r.Step == "prePull" && strings.HasPrefix(r.Message, "pulling") {
			pulls = append(pulls, r.Message)
		}
	}
	if len(pulls) != 3 || pulls[2] != "pulling image 3 of 3: docker.io/library/busybox:latest" {
		t.Errorf("prePull reports %q, want one per image", pulls)
	}
	log, _ := g.File(`C:\var\log\capwin\bootstrap.log`)
	if !strings.Contains(string(log), "pulling docker.io/library/busybox:latest failed") {
		t.Errorf("the failed pull is not in the bootstrap log:\n%s", log)
	}
}
