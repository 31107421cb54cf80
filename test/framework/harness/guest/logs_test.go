package guest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// testLogs: the kubelet's output is kept where its service's kube-log-runner writes it: capwin's
// on an image that has the program, the image's own wrapper when its kubelet service has one, and
// nowhere (said in the bootstrap log) on an image without the program; containerd's log is kept
// in every case.
func (f *fixture) testLogs(t *testing.T) {
	for _, c := range []struct {
		name    string
		image   func(*guest.Config)
		logFile string
		says    string
	}{
		{"capwin's kube-log-runner", func(*guest.Config) {}, userdata.KubeletLogFile, ""},
		{"the image's wrapper", func(c *guest.Config) {
			c.KubeletService = `C:\k\kube-log-runner.exe --log-file=C:/k/logs/kubelet.log C:\k\kubelet.exe --windows-service`
		}, `C:\k\logs\kubelet.log`, "keeps the image's kube-log-runner"},
		{"no kube-log-runner", func(c *guest.Config) { c.NoKubeLogRunner = true }, "", "the kubelet keeps no log file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			name := "win-logs-" + strings.ReplaceAll(strings.Fields(c.name)[0], "'s", "")
			g, _ := f.boot(t, node{format: userdata.FormatPowerShell, name: name, token: createToken(t, f.cs, 15*time.Minute)},
				osversion.LTSC2022, guest.Faults{}, time.Minute, c.image)
			waitDone(t, g, 90*time.Second)
			if err := g.Err(); err != nil {
				t.Fatalf("join: %v", err)
			}
			if c.logFile != "" {
				data, _ := g.File(c.logFile)
				if !strings.Contains(string(data), `] "Successfully registered node" node="`+name+`"`) {
					t.Errorf("%s: %q, want the kubelet's registration", c.logFile, data)
				}
			}
			if c.logFile != userdata.KubeletLogFile {
				if data, ok := g.File(userdata.KubeletLogFile); ok {
					t.Errorf("%s was written: %q", userdata.KubeletLogFile, data)
				}
			}
			if bootstrap, _ := g.File(userdata.LogFile); !strings.Contains(string(bootstrap), c.says) {
				t.Errorf("the bootstrap log does not say %q:\n%s", c.says, bootstrap)
			}
			if data, _ := g.File(userdata.ContainerdLogFile); !strings.Contains(string(data), "containerd successfully booted") {
				t.Errorf("%s: %q", userdata.ContainerdLogFile, data)
			}
		})
	}
}
