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
	"sync"
	"syscall"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/internal/test/vcsim/templates"
	"github.com/capwin/capwin/test/framework/benchutil"
)

// vcsimProcess is vcsim running in a child process, so the controller's memory is measured alone.
type vcsimProcess struct {
	cmd        *exec.Cmd
	url        *url.URL
	thumbprint string
}

// serveVCSim runs the VPX model with TLS, prints its URL and certificate thumbprint and plays
// the guests until interrupted.
func serveVCSim() {
	model := simulator.VPX()
	model.Machine = 1
	if err := model.Create(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	model.Service.TLS = new(tls.Config)
	s := model.Service.NewServer()
	if err := templates.Mark(context.Background(), s.URL, "/DC0/vm/DC0_H0_VM0"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", s.URL.String(), thumbprintOf(s))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// BENCH_VCSIM_CPUPROFILE profiles vcsim and the guests (the controller has -cpuprofile).
	endProfile, err := benchutil.CPUProfile(os.Getenv("BENCH_VCSIM_CPUPROFILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer func() {
		if err := endProfile(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	guest(ctx, s.URL)
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

// guest plays every VM's guest in the vcsim process: once powered on, VMware Tools reports an
// IP. Its calls and CPU are not the controller's.
func guest(ctx context.Context, u *url.URL) {
	c, err := vim25.NewClient(ctx, soap.NewClient(u, true))
	if err == nil {
		err = session.NewManager(c).Login(ctx, u.User)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "guest simulator:", err)
		return
	}
	next := 1
	booted := map[string]bool{}
	for ctx.Err() == nil {
		var vms []mo.VirtualMachine
		v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
		if err == nil {
			err = v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "runtime.powerState"}, &vms)
			_ = v.Destroy(ctx)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "guest simulator:", err)
		}
		// Guests are independent: up to 16 report at once.
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for _, vm := range vms {
			if !strings.HasPrefix(vm.Name, "win-md-0-") || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || booted[vm.Self.Value] {
				continue
			}
			booted[vm.Self.Value] = true
			ip := fmt.Sprintf("10.1.%d.%d", next/250, next%250+1)
			next++
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				task, err := object.NewVirtualMachine(c, vm.Self).Reconfigure(ctx, types.VirtualMachineConfigSpec{
					ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "SET.guest.ipAddress", Value: ip}}})
				if err == nil {
					err = task.Wait(ctx)
				}
				if err != nil && ctx.Err() == nil {
					fmt.Fprintln(os.Stderr, "guest simulator:", vm.Name, err)
				}
			})
		}
		wg.Wait()
		time.Sleep(250 * time.Millisecond)
	}
}
