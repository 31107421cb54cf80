// Package winebin runs the Windows builds of the kubelet, kubeadm, containerd, kube-proxy and
// flanneld under Wine against what capwin renders for a node: each program must get past its own
// flag parsing and configuration checks. It is the Windows-binaries stage (make test-windows);
// scripts/windows-binaries.sh builds the programs and CAPWIN_WINDOWS_BINARIES names their folder.
package winebin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Prefix is a Wine prefix (a Windows installation in a folder) that Go programs can start in:
// its system32 has a bcryptprimitives.dll, and its only drive is its own C: (no Z: mapping of the
// Linux root, so a program sees nothing of this machine but what a test lays into C:).
type Prefix struct {
	dir, wine, wineserver string
	env                   []string
	// base are the paths under C: right after wineboot; reset removes all others.
	base map[string]bool
}

// Result is what a program did.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Output is stdout and stderr together, for messages.
func (r Result) Output() string { return r.Stdout + r.Stderr }

var shared struct {
	once sync.Once
	p    *Prefix
	err  error
}

// NewPrefix returns the test process's Wine prefix, made on first use (wineboot takes a minute)
// and emptied of everything the test lays into C: when the test ends. Tests that use it must not
// run in parallel. Outside the stage (no CAPWIN_WINDOWS_BINARIES: make test, where Wine may be
// missing) it skips the test.
func NewPrefix(t testing.TB) *Prefix {
	t.Helper()
	Dir(t)
	shared.once.Do(func() { shared.p, shared.err = create() })
	if shared.err != nil {
		t.Fatalf("Wine prefix: %v", shared.err)
	}
	p := shared.p
	t.Cleanup(func() {
		if err := p.reset(); err != nil {
			t.Errorf("empty the Wine prefix: %v", err)
		}
	})
	return p
}

// Close stops the prefix's wineserver and removes the prefix (TestMain calls it).
func Close() {
	if shared.p == nil {
		return
	}
	cmd := exec.Command(shared.p.wineserver, "-k")
	cmd.Env = shared.p.env
	_ = cmd.Run()
	_ = os.RemoveAll(shared.p.dir)
}

// Drive is the host folder of the prefix's C:\.
func (p *Prefix) Drive() string { return filepath.Join(p.dir, "drive_c") }

// Path is the host path of a Windows path on C: (C:\etc\kubernetes\kubelet.conf).
func (p *Prefix) Path(windows string) string {
	rest, ok := strings.CutPrefix(strings.ToUpper(windows[:min(2, len(windows))]), "C:")
	if !ok || rest != "" {
		panic("winebin: not a path on C: " + windows)
	}
	return filepath.Join(p.Drive(), filepath.FromSlash(strings.ReplaceAll(windows[2:], `\`, "/")))
}

// Run starts a Windows program (a host path or a path on C:) with args, in C:\, and waits for it
// or for ctx (then the program and its Wine processes are killed). The error is set only when the
// program could not run to its end; its exit code is in the Result.
func (p *Prefix) Run(ctx context.Context, exe string, args ...string) (Result, error) {
	return p.Exec(ctx, Program{Exe: exe, Args: args})
}

// Program is one run of a Windows program.
type Program struct {
	Exe  string
	Args []string
	// Env are more KEY=VALUE variables (a pod's environment).
	Env []string
	// Until stops the program once its output has this text (a daemon that would run on); the
	// Result then has exit code -1 and no error.
	Until string
}

// Exec runs prog as Run does. The program's output goes through pipes this function reads
// itself: the Wine session's helper processes (services.exe, winedevice.exe, started by the first
// program of a session) inherit them and would hold them open for as long as the wineserver
// lingers after the program, seconds more on a busy machine. So once the program ended, the
// session is ended too (wineserver -k), and the output is read to its end.
func (p *Prefix) Exec(ctx context.Context, prog Program) (Result, error) {
	cmd := exec.Command(p.wine, append([]string{prog.Exe}, prog.Args...)...)
	cmd.Dir = p.Drive()
	cmd.Env = append(append([]string(nil), p.env...), prog.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &watch{until: prog.Until, seen: make(chan struct{})}
	out.stdout.w, out.stderr.w = out, out
	read, err := pipeTo(cmd, &out.stdout, &out.stderr)
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		read.abandon()
		return Result{}, fmt.Errorf("start %s under Wine: %w", prog.Exe, err)
	}
	read.started()
	done := make(chan struct{})
	go func() { err = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-out.seen: // killed on purpose: the ExitError below is dropped
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = fmt.Errorf("%s did not end: %w", filepath.Base(prog.Exe), ctx.Err())
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what is left of the program's process group
	p.endSession()
	if !read.wait(time.Minute) && err == nil {
		err = fmt.Errorf("the output of %s is held open after its Wine session ended", filepath.Base(prog.Exe))
	}
	r := Result{Stdout: out.stdout.String(), Stderr: out.stderr.String(), ExitCode: cmd.ProcessState.ExitCode()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil
	}
	return r, err
}

// endSession stops the prefix's wineserver and with it every process of the Wine session.
func (p *Prefix) endSession() {
	cmd := exec.Command(p.wineserver, "-k")
	cmd.Env = p.env
	_ = cmd.Run() // exits 1 when no server runs
}

// readers copy a program's stdout and stderr pipes until every writer closed them.
type readers struct {
	files []*os.File // the write ends, closed in this process once the program has them
	wg    sync.WaitGroup
}

// pipeTo gives cmd an stdout and an stderr pipe whose read ends are copied into stdout and stderr.
func pipeTo(cmd *exec.Cmd, stdout, stderr io.Writer) (*readers, error) {
	r := &readers{}
	for i, w := range []io.Writer{stdout, stderr} {
		pr, pw, err := os.Pipe()
		if err != nil {
			r.abandon()
			return nil, err
		}
		r.files = append(r.files, pw)
		if i == 0 {
			cmd.Stdout = pw
		} else {
			cmd.Stderr = pw
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			_, _ = io.Copy(w, pr)
			_ = pr.Close()
		}()
	}
	return r, nil
}

// started closes this process's write ends: the program and its children hold their own.
func (r *readers) started() {
	for _, f := range r.files {
		_ = f.Close()
	}
}

// abandon closes the write ends of a program that did not start, ending the copies.
func (r *readers) abandon() { r.started() }

// wait waits for the copies to reach the end of the output, false if they did not within limit
// (a process outside the Wine session holds a pipe; a bound, so a test says so instead of hanging).
func (r *readers) wait(limit time.Duration) bool {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}

// watch keeps a program's output and closes seen once it has the text until.
type watch struct {
	mu             sync.Mutex
	stdout, stderr syncBuffer
	until          string
	seen           chan struct{}
	closed         bool
}

type syncBuffer struct {
	w   *watch
	buf bytes.Buffer
}

func (b *syncBuffer) Write(data []byte) (int, error) {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	n, err := b.buf.Write(data)
	if w := b.w; w.until != "" && !w.closed &&
		(strings.Contains(w.stdout.buf.String(), w.until) || strings.Contains(w.stderr.buf.String(), w.until)) {
		w.closed = true
		close(w.seen)
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.buf.String()
}

// create makes a prefix in a new temporary folder.
func create() (*Prefix, error) {
	wine, err := find("wine64", "/usr/lib/wine/wine64")
	if err != nil {
		return nil, err
	}
	server, err := find("wineserver", "/usr/lib/wine/wineserver")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "capwin-wine-")
	if err != nil {
		return nil, err
	}
	p := &Prefix{dir: dir, wine: wine, wineserver: server, env: append(os.Environ(),
		"WINEPREFIX="+dir, "WINEARCH=win64", "WINEDEBUG=-all", "DISPLAY=",
		"WINEDLLOVERRIDES=mscoree,mshtml=")} // no Mono or Gecko installer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, args := range [][]string{{p.wine, "wineboot", "-i"}, {p.wineserver, "-w"}} {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = p.env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.Remove(filepath.Join(dir, "dosdevices", "z:")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dll := forwarderDLL("bcryptprimitives.dll", "ProcessPrng", "advapi32.SystemFunction036")
	if err := os.WriteFile(filepath.Join(p.Drive(), "windows", "system32", "bcryptprimitives.dll"), dll, 0o644); err != nil {
		return nil, err
	}
	p.base = map[string]bool{}
	err = filepath.WalkDir(p.Drive(), func(path string, _ fs.DirEntry, err error) error {
		p.base[path] = true
		return err
	})
	return p, err
}

// reset removes what is not part of the prefix as wineboot left it.
func (p *Prefix) reset() error {
	var added []string
	err := filepath.WalkDir(p.Drive(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || p.base[path] {
			return err
		}
		added = append(added, path)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	for _, path := range added {
		err = errors.Join(err, os.RemoveAll(path))
	}
	return err
}

func find(name, fallback string) (string, error) {
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	if _, err := os.Stat(fallback); err == nil {
		return fallback, nil
	}
	return "", fmt.Errorf("%s not found: run scripts/wine.sh (Debian's wine64)", name)
}
