package doctest_test

import (
	"context"
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

	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capwin/capwin/internal/test/envtest"
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

// verifyOffline: with the clusterctl.yaml the docs wrote and nothing else (no
// CLUSTERCTL_DISABLE_VERSIONCHECK in the environment), clusterctl init on a new, empty management
// cluster finds all five providers and cert-manager in the local repository, asks the network
// for nothing, and installs only images of the release's registry.
func (w *world) verifyOffline(t *testing.T, closed *closedNetwork) {
	t.Helper()
	assets, err := envtest.Assets()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{Environment: &ctrlenvtest.Environment{BinaryAssetsDirectory: assets}}
	if env.Config, err = envtest.StartControlPlane(env.Environment); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	empty := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteAdminKubeconfig("admin", empty); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "clusterctl"), "init", "list-images", "--kubeconfig", empty,
		"--bootstrap", "kubeadm,windows", "--control-plane", "kubeadm", "--infrastructure", "capwin") //nolint:gosec // G204: the clusterctl built for this test
	cmd.Dir = w.dir
	cmd.Env = append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, closed.env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clusterctl init list-images: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	if !slices.Equal(got, offlineImages) {
		t.Errorf("clusterctl init would install\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(offlineImages, "\n"))
	}
	if asked := closed.requests(); len(asked) > 0 {
		t.Errorf("the docs' commands asked the internet: %q", asked)
	}
}
