package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/capwin/capwin/test/framework/hypervsim"
)

const (
	hostUser     = "capwin"
	hostPassword = "password"
	parentDisk   = `C:\golden\win2022.vhdx`
	vswitch      = "external"
)

// hostInfo is what the child prints about one of its hosts.
type hostInfo struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port int    `json:"port"`
	CA   []byte `json:"ca"`
}

// hostsProcess is the simulated hosts running in a child process, so the controller's memory is
// measured alone.
type hostsProcess struct {
	cmd   *exec.Cmd
	hosts []hostInfo
}

// serveHosts runs n hosts, prints them as one JSON line and plays every VM's guest: once a VM
// runs, integration services report a heartbeat and an address and the bootstrap its success.
func serveHosts(n int) {
	var hosts []*hypervsim.Host
	var infos []hostInfo
	for i := 1; i <= n; i++ {
		// 256 GiB: 1000 machines of 4 GiB fit on 20 hosts.
		h := hypervsim.NewHost("hv"+strconv.Itoa(i), 262144, []string{vswitch}, map[string]int64{parentDisk: 30 << 30})
		h.SetJobDelay(200 * time.Millisecond)
		srv, err := h.Serve(map[string]string{hostUser: hostPassword})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer srv.Close()
		hosts = append(hosts, h)
		infos = append(infos, hostInfo{Name: h.Name, Host: srv.Host, Port: srv.Port, CA: srv.CACertPEM()})
	}
	if err := json.NewEncoder(os.Stdout).Encode(infos); err != nil { // one line
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	next := 1
	for {
		select {
		case <-sig:
			return
		case <-time.After(200 * time.Millisecond):
		}
		for _, h := range hosts {
			for _, vm := range h.VMs() {
				if vm.State != "Running" || vm.Heartbeat || len(vm.NICs) == 0 {
					continue
				}
				ip := fmt.Sprintf("10.3.%d.%d", next/250, next%250+1)
				next++
				_ = h.Guest(vm.ID, func(v *hypervsim.VM) {
					v.Heartbeat = true
					v.NICs[0].IPs = []string{ip}
					v.KVP["capwin.bootstrap.status"] = `{"step":"finish","state":"Succeeded"}`
				})
			}
		}
	}
}

func startHosts(ctx context.Context, n int) (*hostsProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "-serve-hosts", strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the benchmark
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("hosts did not start: %w", err)
	}
	p := &hostsProcess{cmd: cmd}
	if err := json.Unmarshal(line, &p.hosts); err != nil || len(p.hosts) != n {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("hosts printed %q: %v", line, err) //nolint:errorlint // shown, not wrapped: err is nil when the JSON holds the wrong number of hosts
	}
	return p, nil
}

func (p *hostsProcess) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
}
