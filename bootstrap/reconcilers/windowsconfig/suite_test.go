package windowsconfig_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
)

var (
	env *envtest.Environment
	k8s client.Client
	ctx = context.Background()
)

// TestMain runs the production wiring (setup.Reconcilers) against a real kube-apiserver. The
// workload cluster of every test Cluster is that same apiserver, reached through the
// <cluster>-kubeconfig Secret and CAPI's ClusterCache exactly as in production.
func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(logOutput())))
	var err error
	env, err = envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run(m)
	_ = env.Stop()
	os.Exit(code)
}

// Watch filters of the suite's two managers: one with the production defaults, one with a
// short join timeout (see fixtureOpts.shortJoinTimeout).
const (
	defaultFilter    = "default"
	shortJoinFilter  = "short-join"
	shortJoinTimeout = 4 * time.Second
	// shortCleanupTimeout is the short-join manager's computer account cleanup timeout.
	shortCleanupTimeout = 3 * time.Second
)

func run(m *testing.M) int {
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var err error
	if k8s, err = startManager(mctx, setup.Options{WatchFilterValue: defaultFilter}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err = startManager(mctx, setup.Options{WatchFilterValue: shortJoinFilter, JoinTimeout: shortJoinTimeout,
		AccountCleanupTimeout: shortCleanupTimeout}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startManager runs the production wiring with the given options and returns its client once
// its cache is synced.
func startManager(mctx context.Context, o setup.Options) (client.Client, error) {
	mgr, err := newManager()
	if err != nil {
		return nil, err
	}
	o.WindowsConfigConcurrency = 4
	o.ClusterCache = clusterCacheOptions
	if err := setup.Reconcilers(mctx, mgr, o); err != nil {
		return nil, err
	}
	return mgr.GetClient(), start(mctx, mgr, o.WatchFilterValue)
}

var clusterCacheOptions = manager.ClusterCacheOptions{Concurrency: 4, QPS: 50, Burst: 100}

// newManager makes a manager as the production one is made.
func newManager() (ctrl.Manager, error) {
	return ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  setup.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   manager.CacheOptions("", 0),
		Client:  manager.ClientOptions(),
		// Several managers in one process register controllers of the same names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
}

// start runs mgr until mctx ends and waits for its cache to sync.
func start(mctx context.Context, mgr ctrl.Manager, name string) error {
	go func() {
		if err := mgr.Start(mctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		return fmt.Errorf("manager %s: cache not synced", name)
	}
	return nil
}

// logOutput shows the controllers' logs only when CAPWIN_TEST_DEBUG is set.
func logOutput() io.Writer {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	return io.Discard
}
