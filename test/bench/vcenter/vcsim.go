package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
)

// vcsimProcess is vcsim running in a child process, so the controller's memory is measured alone.
type vcsimProcess struct {
	cmd        *exec.Cmd
	url        *url.URL
	thumbprint string
}

// serveVCSim runs the VPX model with TLS and prints its URL and certificate thumbprint.
func serveVCSim() {
	model := simulator.VPX()
	model.Machine = 1
	if err := model.Create(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	model.Service.TLS = new(tls.Config)
	s := model.Service.NewServer()
	fmt.Printf("%s %s\n", s.URL.String(), thumbprintOf(s))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
}

func startVCSim(ctx context.Context) (*vcsimProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "-serve-vcsim")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the benchmark
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("vcsim did not start: %w", err)
	}
	fields := strings.Fields(line)
	if len(fields) != 2 {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("vcsim printed %q", line)
	}
	u, err := url.Parse(fields[0])
	if err != nil {
		return nil, err
	}
	return &vcsimProcess{cmd: cmd, url: u, thumbprint: fields[1]}, nil
}

func (p *vcsimProcess) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
}

func thumbprintOf(s *simulator.Server) string { return soap.ThumbprintSHA256(s.Certificate()) }
