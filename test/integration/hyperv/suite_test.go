// Package hyperv_test runs the production infrastructure manager against a real kube-apiserver
// and three simulated Hyper-V hosts reached through the real WinRM client.
package hyperv_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

const (
	watchFilter  = "hyperv-suite"
	hostUser     = "capwin"
	hostPassword = "Host-pw1"
	parentDisk   = `C:\golden\win2022.vhdx`
	vswitch      = "external"
	// identityNamespace plays the manager's namespace, where cluster identities' Secrets live.
	identityNamespace = "capwin-infrastructure-system"
)

// simHost is one simulated Hyper-V host and its WinRM endpoint.
type simHost struct {
	*hypervsim.Host
	srv *wsman.Server
}

var (
	env   *envtest.Environment
	k8s   client.Client
	hosts []simHost
	// conns' deadlines are shorter than the product's (30s, 2m) so that the hung-host test ends
	// soon, and long enough for a two-core machine under load: the suite's clusters share three
	// hosts, and an operation's deadline includes its wait for the host's turn (with 2s, a loaded
	// run's host probe missed it and the host was paused as unreachable).
	conns = &hyperv.Conns{Timeout: 20 * time.Second, Deadlines: hyperv.Deadlines{Short: 10 * time.Second, Long: 10 * time.Second},
		GuestWatch: 200 * time.Millisecond}
	ctx = context.Background()
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipping Hyper-V simulator + envtest suite in -short mode")
		os.Exit(0)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOutput())))
	if err := hypervsim.CheckScripts(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, name := range []string{"hv1", "hv2", "hv3"} {
		h := hypervsim.NewHost(name, 131072, []string{vswitch}, map[string]int64{parentDisk: 30 << 30})
		h.SetJobDelay(200 * time.Millisecond)
		h.OnGuestLogs = collectInGuest
		srv, err := h.Serve(map[string]string{hostUser: hostPassword})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		hosts = append(hosts, simHost{Host: h, srv: srv})
	}
	var err error
	if env, err = envtest.Start(filepath.Join(envtest.RepoRoot(), "infrastructure", "config", "webhook")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run(m)
	_ = env.Stop()
	for _, h := range hosts {
		h.srv.Close()
	}
	os.Exit(code)
}

func run(m *testing.M) int {
	opts := options(watchFilter, conns)
	_, cancel, err := env.StartManager(setup.Scheme(), func(ctx context.Context, mgr ctrl.Manager) error {
		if err := setup.Webhooks(mgr); err != nil {
			return err
		}
		return setup.Reconcilers(ctx, mgr, opts)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cancel()
	// The suite reads what it just wrote: through the API server, not the manager's cache.
	if k8s, err = env.Direct(setup.Scheme()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// options are the manager's settings for the objects labelled filter, with the host connections c.
func options(filter string, c *hyperv.Conns) setup.Options {
	return setup.Options{
		WatchFilterValue: filter, HyperVMachineConcurrency: 4, HyperVClusterConcurrency: 4, VCenterMachineConcurrency: 1, VCenterClusterConcurrency: 1,
		ClusterCache: manager.ClusterCacheOptions{Concurrency: 4, QPS: 50, Burst: 100},
		// Every cluster of the suite probes its hosts each HostRecheck: at 500ms with two workers,
		// the parallel tests' clusters kept the queue full under load, and a new cluster waited
		// over 20s for its first check.
		PollInterval: 300 * time.Millisecond, TaskPollInterval: 100 * time.Millisecond, HostRecheck: 2 * time.Second,
		Conns: c, CredentialRecheck: 200 * time.Millisecond, IdentityNamespace: identityNamespace,
		// Hosts that went down come back within the tests.
		Gate: &logingate.Gate{Backoff: 100 * time.Millisecond, MaxBackoff: time.Second},
	}
}

func logOutput() *os.File {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	f, _ := os.Open(os.DevNull)
	return f
}
