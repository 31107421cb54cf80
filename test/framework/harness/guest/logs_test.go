package guest_test

import (
	"slices"
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
			// The node's config is version 2 (no spec.containerd.version): containerd 2.x says it
			// migrated it, in its log, not on the harness's stderr (make demo printed it there).
			if data, _ := g.File(userdata.ContainerdLogFile); !strings.Contains(string(data), "containerd successfully booted") ||
				!strings.Contains(string(data), "level=warning msg=\"Configuration migrated from version 2") {
				t.Errorf("%s: %q", userdata.ContainerdLogFile, data)
			}
			if script, _ := g.File(userdata.StateDir + `\rotate-logs.ps1`); !slices.Contains(g.Tasks(), userdata.LogRotationTask) ||
				string(script) != string(userdata.RotateLogsScript()) {
				t.Errorf("containerd's log rotation: tasks %v, rotate-logs.ps1 of %d bytes", g.Tasks(), len(script))
			}
			// Node Log Query, through the apiserver's node proxy: the kubelet's query finds its
			// file where capwin puts it (C:\var\log\kubelet\kubelet.log) and only there.
			kubelet := nodeLogs(t, f, name, "", "query", "kubelet")
			if c.logFile == userdata.KubeletLogFile {
				if !strings.Contains(kubelet, "Successfully registered node") {
					t.Errorf("query=kubelet: %q", kubelet)
				}
			} else if !strings.Contains(kubelet, "log not found for kubelet") {
				t.Errorf("query=kubelet: %q, want the kubelet's own words for a service without a log", kubelet)
			}
			if got := nodeLogs(t, f, name, "containerd/containerd.log"); !strings.Contains(got, "containerd successfully booted") {
				t.Errorf("logs/containerd/containerd.log: %q", got)
			}
			if got := nodeLogs(t, f, name, "", "query", "containerd", "tailLines", "10"); !strings.Contains(got, "try without specifying options") {
				t.Errorf("query=containerd&tailLines=10: %q, want the kubelet's refusal of options for a file", got)
			}
			if got := nodeLogs(t, f, name, ""); !strings.Contains(got, `href="containerd/"`) || !strings.Contains(got, `href="capwin/"`) {
				t.Errorf("logs/: %q, want a listing of the log folders", got)
			}
		})
	}
}

// nodeLogs is GET /api/v1/nodes/<name>/proxy/logs/<path>?<params> with the cluster's admin
// credentials, as kubectl get --raw does.
func nodeLogs(t *testing.T, f *fixture, name, path string, params ...string) string {
	t.Helper()
	req := f.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", name, "proxy", "logs").Suffix(path)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	if path == "" {
		req = req.Suffix("/")
	}
	data, err := req.DoRaw(t.Context())
	if err != nil {
		t.Fatalf("logs/%s %v: %v (%s)", path, params, err, data)
	}
	return string(data)
}
