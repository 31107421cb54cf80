package layout

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

// .ci/run reports the exit code of the stage that failed, not that of its own last line (its
// total once said "exit 0" under a failed make test). make is replaced by one that fails with 2.
func TestCIRunReportsTheFailure(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "make"), []byte("#!/bin/sh\necho \"make $*\"\nexit 2\n"), 0o755); err != nil { //nolint:gosec // G306: a stand-in for make that .ci/run executes
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(envtest.RepoRoot(), ".ci", "run"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf(".ci/run: got %v, want exit code 2\n%s", err, out)
	}
	if !strings.Contains(string(out), "make lint") || !strings.Contains(string(out), "(exit 2)") {
		t.Errorf(".ci/run does not report make's exit code 2:\n%s", out)
	}
	if strings.Contains(string(out), "make test") {
		t.Errorf(".ci/run went on after a failed stage:\n%s", out)
	}
}
