package doctest_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/test/framework/localpods"
	"github.com/capwin/capwin/test/framework/sandbox"
	"github.com/capwin/capwin/test/integration/doctest"
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
// .ci/run): it builds cert-manager, the providers' managers and the sandbox's simulators, which
// make test leaves out for its time budget.
var offlineInit = flag.Bool("offline-init", false, "also run clusterctl init for real, in the sandbox of docs/sandbox.md (make test-offline)")

// verifyOffline: with the clusterctl.yaml the docs wrote and nothing else (no
// CLUSTERCTL_DISABLE_VERSIONCHECK in the environment), clusterctl finds cert-manager and all five
// providers in the local repository on a new, empty management cluster, asks the network for
// nothing, and would install only images of the release's registry. With -offline-init, that
// cluster is the sandbox's (test/framework/sandbox, as make sandbox starts it, in .sandbox of the
// reader's directory), and docs/sandbox.md's blocks run in it: clusterctl init installs
// cert-manager and the providers (their Deployments run as local processes), and the cluster the
// page generates from the sandbox's variables comes up on vcsim with simulated guests, scales,
// is explained by render diagnostics and is deleted, and then the same on the simulated Hyper-V
// hosts, without leaving a Machine.
func (w *world) verifyOffline(t *testing.T, closed *closedNetwork) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	kubeconfig, logs := w.startManagement(ctx, t)
	defer func() {
		if t.Failed() {
			logTails(t, logs...)
			keepLogs(t, logs...)
			w.describeClusters(t, kubeconfig)
		}
	}()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "clusterctl"), "init", "list-images", "--kubeconfig", kubeconfig, //nolint:gosec // G204: the clusterctl built for this test
		"--bootstrap", "kubeadm,windows", "--control-plane", "kubeadm", "--infrastructure", "capwin")
	cmd.Dir, cmd.Env = w.dir, append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, closed.env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clusterctl init list-images: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	if !slices.Equal(got, offlineImages) {
		t.Errorf("clusterctl init would install\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(offlineImages, "\n"))
	}
	if *offlineInit {
		w.runSandboxPage(ctx, t, closed)
	}
	if asked := closed.requests(); len(asked) > 0 {
		t.Errorf("the docs' commands asked the internet: %q", asked)
	}
}

// startManagement starts an empty management cluster, or with -offline-init the sandbox, and
// returns its kubeconfig and the folders of its logs. Both stop when the test ends.
func (w *world) startManagement(ctx context.Context, t *testing.T) (kubeconfig string, logs []string) {
	t.Helper()
	if !*offlineInit {
		cluster, err := localpods.Start(ctx, t.TempDir(), nil, testr.New(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cluster.Stop() })
		return cluster.Kubeconfig, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "capwin", "localpods")
	o := sandbox.Options{Dir: filepath.Join(w.dir, ".sandbox"), Log: testr.New(t)}
	if o.Programs, err = localpods.Build(ctx, root, dir); err != nil {
		t.Fatal(err)
	}
	if o.VCSim, o.Sim, err = sandbox.BuildSimulators(ctx, root, dir); err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	if err := s.WriteEnv(o.Dir); err != nil {
		t.Fatal(err)
	}
	return s.Kubeconfig, []string{s.Cluster.Runner.Logs(), s.Logs}
}

// runSandboxPage runs docs/sandbox.md's run blocks in one bash in the reader's directory, after
// the pages of TestDocsRun (install.md's clusterctl.yaml and local repository, render on PATH).
func (w *world) runSandboxPage(ctx context.Context, t *testing.T, closed *closedNetwork) {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, b := range readPage(t, "docs/sandbox.md", true) {
		if b.Kind == doctest.Run {
			fmt.Fprintf(&script, "echo %s\n%s\n", strconv.Quote("### "+b.Where()), b.Text)
		}
	}
	// Deleting the Clusters left no Machine, VCenterMachine or HyperVMachine.
	script.WriteString(`test -z "$(kubectl get machines,vcentermachines,hypervmachines -A -o name)"` + "\n")
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = w.dir, append(w.env(), closed.env()...)
	out, err := cmd.CombinedOutput()
	t.Logf("docs/sandbox.md:\n%s", out)
	if err != nil {
		t.Fatalf("docs/sandbox.md: %v", err)
	}
}

// describeClusters logs, last, what the management cluster shows of the page's clusters when a
// block failed: their conditions and their machines'.
func (w *world) describeClusters(t *testing.T, kubeconfig string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := `kubectl get clusters,kubeadmcontrolplanes,machinedeployments,machines,vcentermachines,hypervmachines -A -o wide
for c in $(kubectl get clusters -o name); do clusterctl describe cluster "${c#*/}" --show-conditions all --echo; done`
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = w.dir, append(w.env(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.CombinedOutput()
	t.Logf("the clusters (%v):\n%s", err, out)
}

// keepLogs copies the folders' logs into $CAPWIN_KEEP_LOGS when it is set, for a failure whose
// log tails do not tell the whole story.
func keepLogs(t *testing.T, dirs ...string) {
	keep := os.Getenv("CAPWIN_KEEP_LOGS")
	if keep == "" {
		return
	}
	for _, dir := range dirs {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l) //nolint:gosec // G304: a log this test's processes wrote
			to := filepath.Join(keep, filepath.Base(dir)+"-"+filepath.Base(l))
			if err := errors.Join(os.MkdirAll(keep, 0o750), os.WriteFile(to, b, 0o600)); err != nil {
				t.Log(err)
			}
		}
	}
	t.Logf("logs kept in %s", keep)
}

// logTails logs the last lines of each log in the folders.
func logTails(t *testing.T, dirs ...string) {
	for _, dir := range dirs {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l) //nolint:gosec // G304: a log this test's processes wrote
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("%s:\n%s", filepath.Base(l), strings.Join(lines[max(0, len(lines)-15):], "\n"))
		}
	}
}
