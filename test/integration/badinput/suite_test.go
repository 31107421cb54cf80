// Package badinput_test runs the production infrastructure manager against a real kube-apiserver
// that has capwin's CRDs (schema and CEL rules) but none of its admission webhooks, with vcsim
// and a simulated Hyper-V host behind it. Every object a webhook would reject is stored as it
// is, as `kubectl apply` with the webhooks down or a restore from a backup stores it, and the
// reconcilers must refuse it: a condition with reason InvalidSpec that names the bad field, an
// event, and nothing created on the hypervisor.
//
// The rows come from the webhooks' create paths: each row must be rejected by its webhook (the
// same function the reconciler runs) and admitted by the schema. WindowsConfigs are covered in
// bootstrap/reconcilers/windowsconfig, whose suite runs without webhooks too.
package badinput_test

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

const (
	watchFilter  = "badinput"
	hostUser     = "capwin"
	hostPassword = "Host-pw1"
	parentDisk   = `C:\golden\win2022.vhdx`
	vswitch      = "external"
)

var (
	env   *envtest.Environment
	k8s   client.Client
	vcsim *simulator.Server
	model *simulator.Model
	host  *hypervsim.Host
	wsSrv *wsman.Server
	ctx   = context.Background()
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipping the bad input suite (envtest, vcsim, Hyper-V simulator) in -short mode")
		os.Exit(0)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOutput())))
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := hypervsim.CheckScripts(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	model = simulator.VPX()
	if err := model.Create(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer model.Remove()
	model.Service.TLS = new(tls.Config) // capwin verifies vCenter's certificate
	vcsim = model.Service.NewServer()
	defer vcsim.Close()
	if err := templates.Mark(context.Background(), vcsim.URL, "/DC0/vm/DC0_H0_VM0"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	vcsimops.TrustHosts(model, soap.ThumbprintSHA256(vcsim.Certificate()))

	host = hypervsim.NewHost("hv1", 131072, []string{vswitch}, map[string]int64{parentDisk: 30 << 30})
	var err error
	if wsSrv, err = host.Serve(map[string]string{hostUser: hostPassword}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer wsSrv.Close()

	if env, err = envtest.Start(); err != nil { // no webhook configurations
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	// vcsim's Close (deferred above) waits for every request in flight, and a session's
	// WaitForUpdatesEx waits up to 5 minutes for a change: the sessions log out first.
	sessions := &session.Sessions{}
	defer sessions.Close(context.Background())
	opts := setup.Options{
		WatchFilterValue: watchFilter, VCenterMachineConcurrency: 4, VCenterClusterConcurrency: 2,
		HyperVMachineConcurrency: 4, HyperVClusterConcurrency: 2,
		ClusterCache: manager.ClusterCacheOptions{Concurrency: 4, QPS: 50, Burst: 100},
		PollInterval: 300 * time.Millisecond, TaskPollInterval: 100 * time.Millisecond, HostRecheck: time.Second,
		Conns: &hyperv.Conns{Timeout: 5 * time.Second}, Sessions: sessions,
	}
	_, cancel, err := env.StartManager(setup.Scheme(), func(ctx context.Context, mgr ctrl.Manager) error {
		return setup.Reconcilers(ctx, mgr, opts) // and no setup.Webhooks
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

func logOutput() io.Writer {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	return io.Discard
}
