// Package envtest starts a real kube-apiserver + etcd (built from source by
// scripts/envtest-assets.sh) with Cluster API's CRDs and capwin's CRDs installed.
package envtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capwin/capwin/internal/test/repo"
)

// RepoRoot is the root of the capwin checkout.
func RepoRoot() string { return repo.Root() }

var assetsOnce = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	// The script is a no-op that prints the directory once the binaries exist.
	out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "envtest-assets.sh")).Output()
	if err != nil {
		return "", fmt.Errorf("envtest binaries: run scripts/envtest-assets.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// Assets returns the directory holding kube-apiserver and etcd.
func Assets() (string, error) { return assetsOnce() }

// ModuleDir returns the module cache directory of a dependency of capwin's main module or, for a
// test-only dependency (CAPI's test module), of the test module in test/.
func ModuleDir(path string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-json", path)
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		cmd = exec.Command("go", "list", "-m", "-json", path)
		cmd.Dir = filepath.Join(RepoRoot(), "test")
		if out, err = cmd.Output(); err != nil {
			return "", fmt.Errorf("go list -m %s: %w", path, err)
		}
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go list -m %s: no module directory", path)
	}
	return m.Dir, nil
}

// CRDPaths are the CRD directories a capwin management cluster needs: CAPI core, CABPK and KCP
// (from the module cache) and capwin's own generated CRDs.
func CRDPaths() ([]string, error) {
	capi, err := ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	paths := []string{
		filepath.Join(capi, "core", "config", "crd", "bases"),
		filepath.Join(capi, "bootstrap", "kubeadm", "config", "crd", "bases"),
		filepath.Join(capi, "controlplane", "kubeadm", "config", "crd", "bases"),
	}
	for _, p := range []string{"bootstrap", "infrastructure"} {
		dir := filepath.Join(RepoRoot(), p, "config", "crd", "bases")
		if _, err := os.Stat(dir); err == nil {
			paths = append(paths, dir)
		}
	}
	return paths, nil
}

// Environment is a running apiserver.
type Environment struct {
	*envtest.Environment
	Config *rest.Config
}

// Start launches kube-apiserver + etcd with all CRDs installed. webhookDirs, when given, are
// installed as webhook configurations pointing at a local webhook server (see
// Environment.WebhookInstallOptions for host, port and certificate directory).
func Start(webhookDirs ...string) (*Environment, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	crds, err := CRDPaths()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
	}
	if len(webhookDirs) > 0 {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: webhookDirs}
	}
	cfg, err := StartControlPlane(env)
	if err != nil {
		return nil, fmt.Errorf("start envtest: %w", err)
	}
	return &Environment{Environment: env, Config: cfg}, nil
}

// StartTimeout bounds the start of one etcd or kube-apiserver. envtest's default, 20 s, is what
// they take on an idle machine; on a busy 2-core one beside other tests they took longer, and
// envtest then kills and starts them again, up to five times, each start as costly as the first.
const StartTimeout = 2 * time.Minute

// starts lets one control plane of this process start at a time: a start is CPU-bound, and the
// starts of a package's parallel tests, run at once, each took several times longer.
var starts sync.Mutex

// StartControlPlane starts env (etcd, kube-apiserver, CRDs, webhooks) after the other starts of
// this process, with StartTimeout when env sets no start timeout.
func StartControlPlane(env *envtest.Environment) (*rest.Config, error) {
	if env.ControlPlaneStartTimeout == 0 {
		env.ControlPlaneStartTimeout = StartTimeout
	}
	starts.Lock()
	defer starts.Unlock()
	return env.Start()
}

// WriteAdminKubeconfig writes a kubeconfig for a user in system:masters (what a management
// cluster's admin has, e.g. for the clusterctl library) to path.
func (e *Environment) WriteAdminKubeconfig(user, path string) error {
	u, err := e.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, kc, 0o600)
}
