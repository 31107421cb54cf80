// Package childproc runs programs as child processes that do not outlive their parent: the
// workload cluster's kube-scheduler and kube-controller-manager (harness/workload), the sandbox's
// simulators (sandbox).
package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Child is a program run as a child process in its own process group, its output in a log file.
type Child struct {
	Name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result, valid after done
}

// Start runs binary with args, logging to <logDir>/<name>.log. The process group is killed when
// ctx ends, and the kernel kills the process if this process dies.
func Start(ctx context.Context, name, binary, logDir string, args ...string) (*Child, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // the child holds its own descriptor; this one wrote nothing
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &Child{Name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Exited reports an error (with the log's tail) if the process has already exited.
func (c *Child) Exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited: %v\n%s", c.Name, c.err, c.Tail()) //nolint:errorlint // shown, not wrapped: Wait's result is nil when the process exited with status 0
	default:
		return nil
	}
}

// Tail is the end of the log.
func (c *Child) Tail() string {
	data, _ := os.ReadFile(c.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(bytes.TrimSpace(data))
}

// Stop sends SIGTERM to the process group, then SIGKILL after a grace period, and waits.
func (c *Child) Stop() error {
	pgid := c.cmd.Process.Pid
	select {
	case <-c.done:
	default:
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-c.done
		}
	}
	// Anything left in the group (there should be nothing) goes too.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s process group: %w", c.Name, err)
	}
	return nil
}

// Done is closed once the process has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Pid is the process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }
