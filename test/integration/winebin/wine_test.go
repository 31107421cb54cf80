package winebin

import (
	"bytes"
	"context"
	"debug/pe"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Close()
	os.Exit(code)
}

// TestForwarderDLL: the DLL is a PE32+ DLL with one section that holds its export directory.
func TestForwarderDLL(t *testing.T) {
	dll := forwarderDLL("bcryptprimitives.dll", "ProcessPrng", "advapi32.SystemFunction036")
	f, err := pe.NewFile(bytes.NewReader(dll))
	if err != nil {
		t.Fatal(err)
	}
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok || f.Characteristics&pe.IMAGE_FILE_DLL == 0 || len(f.Sections) != 1 {
		t.Fatalf("not a 64-bit DLL with one section: %+v", f.FileHeader)
	}
	exp := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]
	data, err := f.Sections[0].Data()
	if err != nil {
		t.Fatal(err)
	}
	if exp.VirtualAddress != f.Sections[0].VirtualAddress || !bytes.Contains(data[:exp.Size], []byte("ProcessPrng\x00advapi32.SystemFunction036\x00")) {
		t.Fatalf("export directory %+v does not hold the forwarder", exp)
	}
}

// TestGoProgramStarts: a Go program starts in the prefix (it dies at start without the DLL), gets
// its arguments and exit code through, and cannot reach the Linux root.
func TestGoProgramStarts(t *testing.T) {
	Dir(t)
	exe := filepath.Join(t.TempDir(), "hello.exe")
	build := exec.Command("go", "build", "-o", exe, "./testdata/hello")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	p := NewPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := p.Run(ctx, exe, "a b", `C:\x`)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || !strings.Contains(r.Stdout, `z-drive-error true args ["a b" "C:\\x"]`) {
		t.Fatalf("exit %d, output:\n%s", r.ExitCode, r.Output())
	}
}

// TestExecEndsWithTheProgram: a program whose child keeps its output pipes open (as the Wine
// session's helper processes do while the wineserver lingers, longer on a busy machine) ends Exec
// when the program itself ends, with its output, and no error.
func TestExecEndsWithTheProgram(t *testing.T) {
	p := NewPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := p.Exec(ctx, Program{Exe: "cmd", Args: []string{"/c", "start /b ping -n 30 127.0.0.1 & echo launched"}})
	if err != nil {
		t.Fatalf("%v:\n%s", err, out.Output())
	}
	if !strings.Contains(out.Stdout, "launched") {
		t.Errorf("output %q", out.Output())
	}
}
