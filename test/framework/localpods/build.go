package localpods

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build builds, into dir, the programs that clusterctl init's Deployments run, and returns them
// by image name: Cluster API's three managers (tools of the test module, so at the Cluster API
// version capwin is tested with, sharing the build of the packages the tests compile),
// cert-manager's three from hack/e2e/certmanager, and capwin's two managers from root. The go
// command skips what is up to date.
func Build(ctx context.Context, root, dir string) (map[string]Program, error) {
	test := filepath.Join(root, "test")
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/cluster-api")
	list.Dir = test
	version, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("the test module's Cluster API: %w", err)
	}
	capiVersion := strings.TrimSpace(string(version))
	minor := strings.SplitN(strings.TrimPrefix(capiVersion, "v1."), ".", 2)[0]
	v := "sigs.k8s.io/cluster-api/version"
	capiLD := fmt.Sprintf("-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean", v, capiVersion, v, v, minor, v)
	certManager := filepath.Join(root, "hack", "e2e", "certmanager")
	type build struct{ module, out, pkg, ldflags string }
	builds := []build{
		{test, "capi-core", "sigs.k8s.io/cluster-api/core", capiLD},
		{test, "capi-kubeadm-bootstrap", "sigs.k8s.io/cluster-api/bootstrap/kubeadm", capiLD},
		{test, "capi-kubeadm-control-plane", "sigs.k8s.io/cluster-api/controlplane/kubeadm", capiLD},
		{root, "capwin-bootstrap", "./bootstrap", ""},
		{root, "capwin-infrastructure", "./infrastructure", ""},
	}
	for _, n := range []string{"controller", "webhook", "cainjector"} {
		builds = append(builds, build{certManager, "cert-manager-" + n, "./cmd/cert-manager-" + n, ""})
	}
	for _, b := range builds {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, b.out), "-ldflags", strings.TrimSpace("-s -w "+b.ldflags), b.pkg) //nolint:gosec // G204: the go command on the packages above
		cmd.Dir = b.module
		// The tests' own build settings (no -trimpath, cgo as the go command defaults), so that the
		// packages the tests compiled are not compiled again.
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	programs := CertManagerPrograms(dir)
	for image, out := range map[string]string{
		"cluster-api-controller": "capi-core", "kubeadm-bootstrap-controller": "capi-kubeadm-bootstrap",
		"kubeadm-control-plane-controller": "capi-kubeadm-control-plane",
		"capwin-bootstrap-windows":         "capwin-bootstrap", "capwin-infrastructure": "capwin-infrastructure",
	} {
		programs[image] = ManagerProgram(filepath.Join(dir, out))
	}
	return programs, nil
}
