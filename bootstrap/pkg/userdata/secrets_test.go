package userdata

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestScriptKeepsSecretsPrivate reads the script's syntax tree: the directories that hold the
// join token, the kubelet's kubeconfigs and keys are limited to SYSTEM and Administrators before
// anything is written to them, containerd's config (registry credentials) is limited the same
// way, and the join configuration (it holds the token) is removed even
// when kubeadm fails or throws.
func TestScriptKeepsSecretsPrivate(t *testing.T) {
	calls, err := pscheck.Calls(filepath.Join("ps", "bootstrap.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	_, doc := render(t, fullInput(FormatPowerShell))
	if want := []string{StateDir, `C:\etc\kubernetes`, `C:\var\lib\kubelet\pki`}; !slices.Equal(doc.Paths.Private, want) {
		t.Errorf("private directories %v, want %v", doc.Paths.Private, want)
	}

	protect, _ := pscheck.Find(calls, in("Protect-Directory", "Invoke-Native"))
	if want := "@($Path, '/inheritance:r', '/grant:r', '*S-1-5-18:(OI)(CI)F', '/grant:r', '*S-1-5-32-544:(OI)(CI)F')"; !slices.Equal(protect.Args, []string{"'icacls.exe'", want}) {
		t.Errorf("Protect-Directory runs %v, want icacls.exe %s (only SYSTEM and Administrators)", protect.Args, want)
	}
	// The main block protects the state directory before the first step reports or writes.
	state, first := -1, -1
	for i, c := range calls {
		switch {
		case c.Function == "" && c.Name == "Protect-Directory" && slices.Equal(c.Args, []string{"$Data.paths.stateDir"}):
			state = i
		case c.Function == "" && c.Name == "Send-Status" && first < 0:
			first = i
		}
	}
	if state < 0 || first < 0 || state > first {
		t.Errorf("the state directory is protected at call %d, the first step starts at call %d", state, first)
	}
	if preflight, _ := pscheck.Find(calls, in("Step-Preflight", "Protect-Directory")); !slices.Equal(preflight.Args, []string{"$dir"}) {
		t.Errorf("preflight does not protect $Data.paths.private")
	}

	// containerd's config may hold registry credentials.
	acl, _ := pscheck.Find(calls, in("Step-Containerd", "Invoke-Native"))
	if want := "@($config.configPath, '/inheritance:r', '/grant:r', '*S-1-5-18:F', '/grant:r', '*S-1-5-32-544:F')"; !slices.Equal(acl.Args, []string{"'icacls.exe'", want}) {
		t.Errorf("Step-Containerd runs %v, want icacls.exe %s (only SYSTEM and Administrators read config.toml)", acl.Args, want)
	}

	// The domain join password is used in memory only: never logged, never written to a file.
	for _, c := range calls {
		if c.Function == "Step-Domain" && slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "$domain.password") }) &&
			c.Name != "ConvertTo-SecureString" {
			t.Errorf("Step-Domain passes the password to %s (line %d)", c.Name, c.Line)
		}
	}
	// The stale-account lookup hands the password to the directory entry only.
	entries := 0
	for _, c := range calls {
		if c.Function != "Find-ComputerAccount" || !slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, ".password") }) {
			continue
		}
		if c.Name != "New-Object" || !slices.Contains(c.Args, "System.DirectoryServices.DirectoryEntry") {
			t.Errorf("Find-ComputerAccount passes the password to %s %v (line %d)", c.Name, c.Args, c.Line)
		}
		entries++
	}
	if entries != 1 {
		t.Errorf("Find-ComputerAccount makes %d directory entries with the password, want 1", entries)
	}
	if secure, _ := pscheck.Find(calls, in("Step-Domain", "ConvertTo-SecureString")); !slices.Contains(secure.Args, "$domain.password") {
		t.Error("Step-Domain does not turn the password into a SecureString")
	}

	write, _ := pscheck.Find(calls, in("Step-Join", "[IO.File]::WriteAllText"))
	remove, _ := pscheck.Find(calls, in("Step-Join", "Remove-Item"))
	if !slices.Equal(write.Blocks, []string{"try"}) || !slices.Equal(remove.Blocks, []string{"finally"}) || !slices.Contains(remove.Args, "$join.configPath") {
		t.Errorf("the join configuration is not written in a try whose finally removes it: %+v / %+v", write, remove)
	}
}

// in matches the calls of name inside function fn.
func in(fn, name string) func(pscheck.Call) bool {
	return func(c pscheck.Call) bool { return c.Function == fn && c.Name == name }
}

// TestScriptRemovesItsOwnFile: a script started from a file (capwin copies it into guests
// without cloudbase-init) removes that file, which holds the join token, when it finishes.
func TestScriptRemovesItsOwnFile(t *testing.T) {
	calls, err := pscheck.Calls(filepath.Join("ps", "bootstrap.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, i := pscheck.Find(calls, func(c pscheck.Call) bool {
		return in("Step-Finish", "Remove-Item")(c) && slices.Contains(c.Args, "$PSCommandPath")
	}); i < 0 {
		t.Error("Step-Finish does not remove $PSCommandPath")
	}
}
