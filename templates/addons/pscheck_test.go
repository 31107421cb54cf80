package addons

import (
	"io/fs"
	"path"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestPowerShellParses parses every .ps1 with the PowerShell grammar (`make npm` installs it).
// The embedded files are the package's own, so their paths are relative to the test's directory.
func TestPowerShellParses(t *testing.T) {
	var scripts []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if path.Ext(p) == ".ps1" {
			scripts = append(scripts, p)
		}
		return err
	})
	if len(scripts) != 3 {
		t.Fatalf("found scripts %v, want 3", scripts)
	}
	results, err := pscheck.Files(scripts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if len(r.Errors) > 0 {
			t.Errorf("%s does not parse:\n%s", r.File, r)
		}
	}
}
