package doctest_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/test/framework/localpods"
)

// closedNetwork stands in for a site without internet access: every HTTP and HTTPS request of
// the docs' commands goes to it (HTTP_PROXY, HTTPS_PROXY; NO_PROXY: this machine's API servers),
// and it refuses each and records what was asked; the go command gets GOPROXY=off.
type closedNetwork struct {
	srv   *httptest.Server
	mu    sync.Mutex
	asked []string
}

func newClosedNetwork(t *testing.T) *closedNetwork {
	n := &closedNetwork{}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.asked = append(n.asked, r.Method+" "+r.Host+r.URL.Path)
		n.mu.Unlock()
		http.Error(w, "this site has no internet access", http.StatusForbidden)
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *closedNetwork) env() []string {
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		env = append(env, k+"="+n.srv.URL)
	}
	return append(env, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1", "GOPROXY=off")
}

// requests are what the commands asked of the internet so far.
func (n *closedNetwork) requests() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.asked)
}

// writeOfflineRepository writes out/offline/repository as make release-offline OFFLINE_IMAGES=false
// does (the same script), from the module cache alone (GOPROXY=off: make test downloaded the
// modules first, as a site copies a module cache).
func writeOfflineRepository(dir string) error {
	cmd := exec.Command(filepath.Join(root, "scripts", "offline-repository.sh"), filepath.Join(dir, "out", "offline"), stamp.Registry) //nolint:gosec // G204: the repository's script
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/offline-repository.sh: %w\n%s", err, out)
	}
	return nil
}

// offlineImages are the images an air-gapped clusterctl init installs: capwin's managers and
// those of make release-offline, all in the release's registry.
var offlineImages = []string{
	"registry.example.com/capwin/capwin-bootstrap-windows:v0.1.0",
	"registry.example.com/capwin/capwin-infrastructure:v0.1.0",
	"registry.example.com/capwin/cert-manager-cainjector:v1.21.2",
	"registry.example.com/capwin/cert-manager-controller:v1.21.2",
	"registry.example.com/capwin/cert-manager-webhook:v1.21.2",
	"registry.example.com/capwin/cluster-api-controller:v1.14.2",
	"registry.example.com/capwin/kubeadm-bootstrap-controller:v1.14.2",
	"registry.example.com/capwin/kubeadm-control-plane-controller:v1.14.2",
}

// offlineInit turns on the whole air-gapped install in verifyOffline (make test-offline, run by
// .ci/run): it builds cert-manager and the providers' managers, which make test leaves out for
// its time budget.
var offlineInit = flag.Bool("offline-init", false, "also run clusterctl init for real (make test-offline)")

// verifyOffline: with the clusterctl.yaml the docs wrote and nothing else (no
// CLUSTERCTL_DISABLE_VERSIONCHECK in the environment), clusterctl finds cert-manager and all five
// providers in the local repository on a new, empty management cluster, asks the network for
// nothing, and would install only images of the release's registry. With -offline-init,
// clusterctl init installs them, their Deployments run (each image's program as a local process,
// test/framework/localpods), the cluster they make admits win1.yaml through their webhooks, and
// clusterctl describe reads it back.
func (w *world) verifyOffline(t *testing.T, closed *closedNetwork) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var programs map[string]localpods.Program
	if *offlineInit {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		if programs, err = localpods.Build(ctx, root, filepath.Join(cache, "capwin", "localpods")); err != nil {
			t.Fatal(err)
		}
	}
	cluster, err := localpods.Start(ctx, t.TempDir(), programs, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cluster.Stop() }()
	defer func() {
		if t.Failed() {
			logTails(t, cluster.Runner.Logs())
		}
	}()
	run := func(name string, args ...string) string {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), append(args, "--kubeconfig", cluster.Kubeconfig)...) //nolint:gosec // G204: the tools built for this test
		cmd.Dir = w.dir
		cmd.Env = append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, closed.env()...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	providers := []string{"--bootstrap", "kubeadm,windows", "--control-plane", "kubeadm", "--infrastructure", "capwin"}
	got := strings.Fields(run("clusterctl", append([]string{"init", "list-images"}, providers...)...))
	slices.Sort(got)
	if !slices.Equal(got, offlineImages) {
		t.Errorf("clusterctl init would install\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(offlineImages, "\n"))
	}
	if *offlineInit {
		t.Log(run("clusterctl", append([]string{"init", "--wait-providers", "--wait-provider-timeout", "600"}, providers...)...))
		t.Log(run("kubectl", "get", "deployments", "-A"))
		// An available Deployment can serve its webhook before cert-manager's cainjector has put
		// the CA into the webhook configuration (the API server then refuses its certificate):
		// as on any cluster just made, apply again until the bundles are in, for a minute.
		apply := func() ([]byte, error) {
			cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "apply", "-f", "win1.yaml", "--kubeconfig", cluster.Kubeconfig) //nolint:gosec // G204: the kubectl built for this test
			cmd.Dir, cmd.Env = w.dir, append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, closed.env()...)
			return cmd.CombinedOutput()
		}
		out, err := apply()
		for end := time.Now().Add(time.Minute); err != nil && strings.Contains(string(out), "failed calling webhook") && time.Now().Before(end); {
			time.Sleep(2 * time.Second)
			out, err = apply()
		}
		if err != nil {
			t.Fatalf("kubectl apply -f win1.yaml: %v\n%s", err, out)
		}
		t.Log(string(out))
		t.Log(run("clusterctl", "describe", "cluster", "win1", "-n", "default"))
	}
	if asked := closed.requests(); len(asked) > 0 {
		t.Errorf("the docs' commands asked the internet: %q", asked)
	}
}

// logTails logs the last lines of each local pod's log.
func logTails(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l) //nolint:gosec // G304: a log this test's pods wrote
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Logf("%s:\n%s", filepath.Base(l), strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}
