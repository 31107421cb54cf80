package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

// The main module builds the managers, the addon installer and the tools; what only tests need
// (CAPI's test module, ginkgo, gonum/plot for the benchmark plots, kubectl for the doc test)
// belongs to the test module in test/.
func TestMainModuleCarriesNoTestOnlyDependency(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./...")
	cmd.Dir = envtest.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps ./... listed %d packages, want the main module's whole build", len(deps))
	}
	testOnly := []string{"sigs.k8s.io/cluster-api/test/", "github.com/onsi/ginkgo/", "gonum.org/v1/plot", "k8s.io/kubectl/",
		"github.com/capwin/capwin/test/"}
	for _, d := range deps {
		for _, p := range testOnly {
			if strings.HasPrefix(d, p) {
				t.Errorf("the main module builds %s; test-only dependencies belong to the test module (test/go.mod)", d)
			}
		}
	}
}

// ... nor requires them in its go.mod.
func TestMainGoModRequiresNoTestOnlyModule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"sigs.k8s.io/cluster-api/test ", "github.com/onsi/ginkgo/v2 ", "gonum.org/v1/plot ", "k8s.io/kubectl "} {
		if strings.Contains(string(b), m) {
			t.Errorf("go.mod requires %s; it belongs to test/go.mod", strings.TrimSpace(m))
		}
	}
}
