package workload

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

// child is a component run as a child process in its own process group.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result, valid after done
}

// startChild runs binary with args, logging to <logDir>/<name>.log. The process group is
// killed when ctx ends, and the kernel kills the process if the test binary dies.
func startChild(ctx context.Context, name, binary, logDir string, args ...string) (*child, error) {
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
	c := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// exited reports an error (with the log's tail) if the process has already exited.
func (c *child) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited: %v\n%s", c.name, c.err, c.tail()) //nolint:errorlint // shown, not wrapped: Wait's result is nil when the process exited with status 0
	default:
		return nil
	}
}

func (c *child) tail() string {
	data, _ := os.ReadFile(c.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(bytes.TrimSpace(data))
}

// stop sends SIGTERM to the process group, then SIGKILL after a grace period, and waits.
func (c *child) stop() error {
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
		return fmt.Errorf("kill %s process group: %w", c.name, err)
	}
	return nil
}

// withDeathSignal returns an executable for envtest to run in place of binary: a script that
// execs binary under `setpriv --pdeathsig KILL`, so etcd and kube-apiserver (which envtest
// starts without a parent-death signal) die with the test binary even when it panics on a
// timeout. Without setpriv (util-linux) it returns binary itself.
func withDeathSignal(dir, binary string) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return binary, nil
	}
	script := filepath.Join(dir, filepath.Base(binary)+".sh")
	body := fmt.Sprintf("#!/bin/sh\nexec %q --pdeathsig KILL -- %q \"$@\"\n", setpriv, binary)
	return script, os.WriteFile(script, []byte(body), 0o700) //nolint:gosec // G306: a script envtest executes: owner-only and executable
}
