package sandbox

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is a simulator running as a child process, its output in a log file.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProcess starts binary with args, stdout and stderr to logFile. The child gets SIGTERM
// when this process dies, so no simulator outlives the sandbox.
func startProcess(ctx context.Context, logFile, binary string, args ...string) (*process, error) {
	f, err := os.Create(logFile) //nolint:gosec // G304: the sandbox's own log folder
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, binary, args...) //nolint:gosec // G204: the simulators built for the sandbox
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, err
	}
	p := &process{cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// stop ends the process with SIGTERM, and kills it after ten seconds.
func (p *process) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// tail is the last lines of the log.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
