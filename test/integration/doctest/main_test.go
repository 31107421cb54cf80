// The doc test: the shell and YAML blocks of README.md, docs/install.md, docs/quickstart.md,
// docs/upgrades.md and docs/version-upgrades.md that can run offline run here, in order, in one
// shell, as a reader would type them, with the real clusterctl, kubectl and render against a real
// management API server (CAPI's and capwin's CRDs and webhooks); the commands of every page are
// checked against the tools' --help.
package doctest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/capwin/capwin/internal/test/repo"
	"github.com/capwin/capwin/test/framework/harness/management"
	"github.com/capwin/capwin/test/integration/doctest"
)

var (
	mgmt       *management.Management
	kubeconfig string // admin kubeconfig of the management API server
	bin        string // clusterctl, kubectl, jq and render, built from go.mod's versions
	root       = repo.Root()
)

// runPages are the pages whose blocks are marked and run, in reading order. Each page goes on
// from what the pages before it left in the shell: install.md's clusterctl repository and render
// serve the quick start, whose exported variables and win1.kubeconfig serve the upgrade pages;
// version-upgrades.md goes on with the cluster win1 of upgrades.md.
var runPages = []string{"README.md", "docs/install.md", "docs/quickstart.md", "docs/upgrades.md", "docs/version-upgrades.md"}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmp, err := os.MkdirTemp("", "capwin-doctest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }() // best effort: a temporary directory
	bin = filepath.Join(tmp, "bin")
	if err := buildTools(bin); err != nil {
		fmt.Fprintln(os.Stderr, "building the tools:", err)
		return 1
	}
	kubeconfig = filepath.Join(tmp, "kubeconfig")
	if mgmt, err = management.StartForClients(ctx, "doctest-none", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = mgmt.Stop() }()
	return m.Run()
}

// buildTools builds clusterctl (Cluster API's own command), kubectl (k8s.io/kubectl), jq (gojq)
// and render into dir.
func buildTools(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// jq and render come from the main module; kubectl (test/cmd/kubectl) from the test module,
	// and clusterctl as make clusterctl builds it (scripts/clusterctl.sh, stamped with its version).
	clusterctl := exec.Command(filepath.Join(root, "scripts", "clusterctl.sh"), filepath.Join(dir, "clusterctl")) //nolint:gosec // G204: the repository's script
	if out, err := clusterctl.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	for _, b := range []struct {
		module string
		pkgs   []string
	}{
		{root, []string{"github.com/itchyny/gojq/cmd/gojq", "./bootstrap/cmd/render"}},
		{filepath.Join(root, "test"), []string{"./cmd/kubectl"}},
	} {
		build := exec.Command(goCommand(), append([]string{"build", "-o", dir + string(filepath.Separator)}, b.pkgs...)...)
		build.Dir = b.module
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
	}
	return os.Rename(filepath.Join(dir, "gojq"), filepath.Join(dir, "jq"))
}

// goCommand is the go command that runs this test.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

// readPage parses a page of runPages (marked) or another page (unmarked).
func readPage(t *testing.T, page string, marked bool) []doctest.Block {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	parse := doctest.Blocks
	if marked {
		parse = doctest.Parse
	}
	blocks, err := parse(page, md)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}
