package hyperv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwin/capwin/test/pscheck"
)

// TestScriptsParse checks every host script with the PowerShell grammar, and that the runner fits
// on a command line (cmd.exe allows 8191 characters).
func TestScriptsParse(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	var paths []string
	for _, s := range Scripts() {
		paths = append(paths, filepath.Join("ps", s.Name+".ps1"))
		for i, c := range s.Text {
			if c > 127 {
				t.Errorf("%s: non-ASCII character at %d", s.Name, i)
				break
			}
		}
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
	if n := len(RunnerCommand); n > 8000 {
		t.Errorf("runner command line is %d characters", n)
	}
}

// TestScriptsTakeOnlyInput: operation scripts declare one parameter, the JSON document.
func TestScriptsTakeOnlyInput(t *testing.T) {
	for _, s := range Scripts() {
		if s.Name == "runner" || s.Name == "common" {
			continue
		}
		if !strings.Contains(s.Text, "\nparam($In)\n") {
			t.Errorf("%s: does not start with param($In)", s.Name)
		}
	}
	if _, err := os.Stat(filepath.Join("ps", "runner.ps1")); err != nil {
		t.Fatal(err)
	}
}
