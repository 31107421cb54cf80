// Package sandbox is a place to try the quick start in, on this machine, without Docker or a
// hypervisor: an empty management cluster whose Deployments run as local processes
// (test/framework/localpods), so `clusterctl init` installs the real providers into it; govmomi's
// vCenter simulator with the templates the quick start names (test/e2e/kind/vcsim); and the kind
// e2e's guest simulator (test/e2e/kind/sim), which boots every VM that powers on from the user
// data capwin delivered: the Linux control plane machine serves the workload cluster's API at
// CONTROL_PLANE_ENDPOINT_IP (127.0.0.1:6443), Windows machines join it. `make sandbox` runs it
// (test/cmd/sandbox) and prints the variables the quick start asks for (Env).
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-logr/logr"

	"github.com/capwin/capwin/test/framework/childproc"
	"github.com/capwin/capwin/test/framework/localpods"
)

// The sandbox's vCenter: vcsim's default model, with the quick start's templates.
const (
	Datacenter    = "DC0"
	Network       = "VM Network"
	ResourcePool  = "/DC0/host/DC0_C0/Resources"
	LinuxTemplate = "ubuntu-2404-kube-v1.36.3"
	// Windows templates: WINDOWS_TEMPLATE is the first; the second is the blue/green upgrade's.
	Windows2022 = "windows-2022"
	Windows2025 = "windows-2025"
	// The Hyper-V hosts' virtual switch and parent disks (LINUX_TEMPLATE and WINDOWS_TEMPLATE of
	// the hyperv-windows flavor).
	HyperVSwitch    = "External"
	HyperVLinuxDisk = `D:\images\ubuntu-2404-kube-v1.36.3.vhdx`
	HyperV2022Disk  = `D:\images\windows-2022.vhdx`
	HyperV2025Disk  = `D:\images\windows-2025.vhdx`
	// EndpointIP is CONTROL_PLANE_ENDPOINT_IP: the simulator serves each workload cluster's API
	// there, on the port of the Cluster's endpoint (6443 in capwin's flavors).
	EndpointIP = "127.0.0.1"
)

// Options configures Start.
type Options struct {
	// Dir holds the sandbox's files: kubeconfig, env.sh, logs/ and the pods' folders.
	Dir string
	// Programs are the management cluster's images as local programs (localpods.Build).
	Programs map[string]localpods.Program
	// VCSim and Sim are the simulators' binaries (BuildSimulators).
	VCSim, Sim string
	Log        logr.Logger
}

// Sandbox is a running sandbox.
type Sandbox struct {
	// Kubeconfig is the management cluster's admin kubeconfig.
	Kubeconfig string
	// VCenter is the vCenter server as VSPHERE_SERVER names it (host:port).
	VCenter    string
	Thumbprint string
	Username   string
	// Password is the vCenter's and the Hyper-V hosts' (for HyperVUsername).
	Password string
	// HyperVHosts is HYPERV_HOSTS: two hosts on loopback ports, with their caBundle.
	HyperVHosts    string
	HyperVUsername string
	Cluster        *localpods.Cluster
	// Logs holds vcsim.log and sim.log.
	Logs string

	procs []*childproc.Child
}

// Start starts the management cluster, vcsim and the guest simulator, and returns when the
// simulator has made the templates.
func Start(ctx context.Context, o Options) (_ *Sandbox, retErr error) {
	s := &Sandbox{Logs: filepath.Join(o.Dir, "logs"), Username: "sandbox@vsphere.local", Password: randomPassword(),
		HyperVUsername: "capwin"}
	defer func() {
		if retErr != nil {
			_ = s.Stop()
		}
	}()
	management := filepath.Join(o.Dir, "management")
	for _, d := range []string{s.Logs, management} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var err error
	if s.Cluster, err = localpods.Start(ctx, management, o.Programs, o.Log.WithName("pods")); err != nil {
		return nil, fmt.Errorf("management cluster: %w", err)
	}
	s.Kubeconfig = s.Cluster.Kubeconfig
	if err := s.startSimulators(ctx, o); err != nil {
		return nil, err
	}
	return s, nil
}

// Env is what the quick start's step 2 exports, for this sandbox, by name.
func (s *Sandbox) Env() map[string]string {
	return map[string]string{
		"KUBECONFIG":                s.Kubeconfig,
		"VSPHERE_SERVER":            s.VCenter,
		"VSPHERE_USERNAME":          s.Username,
		"VSPHERE_PASSWORD":          s.Password,
		"VSPHERE_DATACENTER":        Datacenter,
		"VSPHERE_NETWORK":           Network,
		"VSPHERE_RESOURCE_POOL":     ResourcePool,
		"VSPHERE_TLS_THUMBPRINT":    s.Thumbprint,
		"LINUX_TEMPLATE":            LinuxTemplate,
		"WINDOWS_TEMPLATE":          Windows2022,
		"CONTROL_PLANE_ENDPOINT_IP": EndpointIP,
	}
}

// HyperVEnv is what the quick start's step 2 exports for Hyper-V, by name (besides KUBECONFIG
// and CONTROL_PLANE_ENDPOINT_IP of Env); LINUX_TEMPLATE and WINDOWS_TEMPLATE are parent disks.
func (s *Sandbox) HyperVEnv() map[string]string {
	return map[string]string{
		"HYPERV_HOSTS":     s.HyperVHosts,
		"HYPERV_SWITCH":    HyperVSwitch,
		"HYPERV_USERNAME":  s.HyperVUsername,
		"HYPERV_PASSWORD":  s.Password,
		"LINUX_TEMPLATE":   HyperVLinuxDisk,
		"WINDOWS_TEMPLATE": HyperV2022Disk,
	}
}

// WriteEnv writes HyperVEnv to dir/env-hyperv.sh, then Env to dir/env.sh (whose existence says
// the sandbox is ready): shell files to source, sorted by name, values in single quotes.
func (s *Sandbox) WriteEnv(dir string) error {
	for _, f := range []struct {
		file string
		env  map[string]string
	}{{"env-hyperv.sh", s.HyperVEnv()}, {"env.sh", s.Env()}} {
		file, env := f.file, f.env
		var b strings.Builder
		fmt.Fprintf(&b, "# The capwin sandbox (make sandbox): source this file, then follow docs/sandbox.md.\n")
		for _, n := range slices.Sorted(maps.Keys(env)) {
			fmt.Fprintf(&b, "export %s='%s'\n", n, strings.ReplaceAll(env[n], "'", `'\''`))
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops the simulators (their VMs and guests go with them) and the management cluster.
func (s *Sandbox) Stop() error {
	var errs []error
	for i := len(s.procs) - 1; i >= 0; i-- {
		errs = append(errs, s.procs[i].Stop())
	}
	if s.Cluster != nil {
		errs = append(errs, s.Cluster.Stop())
	}
	return errors.Join(errs...)
}

func randomPassword() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return "Sandbox-" + hex.EncodeToString(b)
}
