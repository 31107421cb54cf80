package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

// goTest is a command line that runs go test (go, $(GO), $GO or "$GO", optionally with -C dir).
var goTest = regexp.MustCompile(`(^|[\s(])(go|\$\(GO\)|\$GO|"\$GO")(\s+-C\s+\S+)?\s+test\s`)

// Every go test that make and the scripts run has a -timeout of its own: none relies on Go's
// default of 10 minutes, which a cold build cache can outlast (issue: make test on a new machine).
func TestEveryGoTestHasATimeout(t *testing.T) {
	root := envtest.RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "Makefile"), filepath.Join(root, ".ci", "run"))
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			start, line := i+1, lines[i]
			for strings.HasSuffix(line, "\\") && i+1 < len(lines) { // a command continued on the next line
				i++
				line = strings.TrimSuffix(line, "\\") + " " + lines[i]
			}
			if strings.HasPrefix(strings.TrimSpace(line), "#") || !goTest.MatchString(line) {
				continue
			}
			found++
			if !strings.Contains(line, "-timeout") {
				t.Errorf("%s:%d: go test without -timeout: %s", filepath.Base(f), start, strings.TrimSpace(line))
			}
		}
	}
	if found < 4 {
		t.Errorf("found %d go test commands; the pattern no longer matches the Makefile and scripts/test.sh", found)
	}
}
