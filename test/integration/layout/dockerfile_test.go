package layout

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

// The root Dockerfile builds the managers, the addon installer and the kind e2e's guest simulator
// from the folders it copies: every folder of the repository those programs import is copied
// (the simulator's image once failed to build when the simulated guest began to import
// nodehealth/).
func TestDockerfileCopiesWhatItBuilds(t *testing.T) {
	root := envtest.RepoRoot()
	copied := dockerfileCopies(t, filepath.Join(root, "Dockerfile"))
	for _, b := range []struct {
		module, tags string
		packages     []string
	}{
		{".", "", []string{"./bootstrap", "./infrastructure", "./addoninstaller"}},
		{"test", "e2e", []string{"./e2e/kind/sim"}},
	} {
		cmd := exec.Command("go", append([]string{"list", "-deps", "-tags", b.tags}, b.packages...)...)
		cmd.Dir = filepath.Join(root, b.module)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", b.packages, err)
		}
		for _, p := range strings.Fields(string(out)) {
			rest, ok := strings.CutPrefix(p, "github.com/capwin/capwin/")
			if !ok {
				continue
			}
			if folder := strings.SplitN(rest, "/", 2)[0]; !copied[folder] {
				t.Errorf("%v import %s, but the Dockerfile does not copy %s/", b.packages, p, folder)
			}
		}
	}
}

// dockerfileCopies are the top-level folders a Dockerfile copies from the build context.
func dockerfileCopies(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && fields[0] == "COPY" && !strings.HasPrefix(fields[1], "--") {
			out[strings.SplitN(strings.TrimPrefix(fields[1], "./"), "/", 2)[0]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
