package userdata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestPowerShellParses parses the static script and every rendered script with the PowerShell
// grammar (one parser run for all files: node start-up dominates).
func TestPowerShellParses(t *testing.T) {
	dir := t.TempDir()
	paths := []string{filepath.Join("ps", "bootstrap.ps1"), filepath.Join("ps", "rotate-logs.ps1")}
	for name, in := range map[string]Input{
		"full-powershell.ps1":    fullInput(FormatPowerShell),
		"full-cloudconfig.ps1":   fullInput(FormatCloudConfig),
		"minimal-powershell.ps1": minimalInput(FormatPowerShell),
	} {
		out, err := Render(in)
		if err != nil {
			t.Fatal(err)
		}
		u, err := Unpack(out)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, u.Script, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	results, err := pscheck.Files(paths...)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(paths) {
		t.Fatalf("parsed %d files, want %d", len(results), len(paths))
	}
	for _, r := range results {
		if len(r.Errors) > 0 {
			t.Error(r.String())
		}
	}
}
