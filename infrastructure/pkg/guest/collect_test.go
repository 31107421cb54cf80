package guest

import (
	"path/filepath"
	"strings"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/pscheck"
)

func TestCollectDocument(t *testing.T) {
	c := NewCollect("r1a2")
	if c.Output != `C:\ProgramData\capwin\collect-r1a2.zip` || c.Work != `C:\ProgramData\capwin\collect-r1a2` ||
		PathsOfCollect("r1a2").Script != `C:\ProgramData\capwin\collect-r1a2.ps1` {
		t.Fatalf("paths: %+v", c)
	}
	for _, d := range c.Directories {
		// The bootstrap data's folder holds the join token while the bootstrap runs.
		if strings.EqualFold(d, GuestDir) || strings.HasPrefix(strings.ToLower(GuestDir), strings.ToLower(d)+`\`) {
			t.Fatalf("the collector reads all of %s", d)
		}
	}
	script, err := c.Script()
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(script), "\r\n")
	if !strings.HasPrefix(first, "$CapwinCollect = '") || rest != CollectScript() {
		t.Fatalf("collector is not one data line plus the static script:\n%s", first)
	}
	back, err := ParseCollect(script)
	if err != nil || back.Output != c.Output || len(back.EventLogs) != 2 || back.MaxArchiveBytes != CollectMaxArchiveBytes {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if _, err := ParseCollect([]byte("Write-Host hi\r\n")); err == nil {
		t.Fatal("a script that is not a collector was read")
	}
	if got := ArchiveName(`C:\var\log\kubelet\kubelet.log`); got != "files/C/var/log/kubelet/kubelet.log" {
		t.Fatalf("ArchiveName = %s", got)
	}
}

// TestCollectScriptParses checks the static collector and a rendered one with the PowerShell
// grammar, and that it is ASCII (Windows PowerShell 5.1 reads BOM-less files as ANSI).
func TestCollectScriptParses(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	script, _ := NewCollect("r1").Script()
	checkScript(t, "collect.ps1", script)
}

// TestCollectReadsOnly: the collector removes nothing but its own folder and output, and starts
// nothing but the read-only commands it names.
func TestCollectReadsOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	calls, err := pscheck.Calls(filepath.Join("ps", "collect.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"$Collect.work": true, "$Collect.output": true, "(Join-Path $Collect.work 'files')": true}
	for _, c := range calls {
		switch c.Name {
		case "Remove-Item":
			if len(c.Args) < 2 || !allowed[c.Args[1]] {
				t.Errorf("line %d: Remove-Item %v outside the collector's folder", c.Line, c.Args)
			}
		case "Stop-Service", "Restart-Service", "Set-ItemProperty", "Remove-HnsNetwork", "Restart-Computer", "Set-Service":
			t.Errorf("line %d: %s changes the node", c.Line, c.Name)
		}
	}
}

// FuzzCollect: a request id that passes admission (the only value of a log request that reaches
// the guest) stays data: the collector is one line of base64 before the static script, its
// document reads back, and every path it names is in capwin's folder with the id inside the
// file name only.
func FuzzCollect(f *testing.F) {
	for _, s := range []string{"r1", "r1764000000", "a-b", "x'; Remove-Item C:\\ -Recurse #", "..", "r1\r\nWrite-Host"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !infrav1.ValidCollectLogsID(id) {
			return
		}
		c := NewCollect(id)
		script, err := c.Script()
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(script), "\r\n")
		if rest != CollectScript() || strings.ContainsAny(strings.TrimSuffix(strings.TrimPrefix(first, "$CapwinCollect = '"), "'"), "'\"`$;\r\n ") {
			t.Fatalf("the id %q reached the script text: %s", id, first)
		}
		back, err := ParseCollect(script)
		if err != nil || back.Output != c.Output || back.Work != c.Work {
			t.Fatalf("read back %+v, %v", back, err)
		}
		for _, p := range []string{c.Output, c.Work, PathsOfCollect(id).Script} {
			if !strings.HasPrefix(p, GuestDir+`\collect-`+id) || strings.Count(p, `\`) != strings.Count(GuestDir, `\`)+1 {
				t.Fatalf("path %q leaves %s", p, GuestDir)
			}
		}
	})
}
