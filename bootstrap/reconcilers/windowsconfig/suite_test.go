package windowsconfig_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/test/envtest"
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

func run(m *testing.M) int {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  setup.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   manager.CacheOptions("", 0),
		Client:  manager.ClientOptions(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := setup.Reconcilers(mctx, mgr, setup.Options{
		WindowsConfigConcurrency: 4, ClusterCache: manager.ClusterCacheOptions{Concurrency: 4, QPS: 50, Burst: 100},
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		if err := mgr.Start(mctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	k8s = mgr.GetClient()
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		return 1
	}
	return m.Run()
}

// logOutput shows the controllers' logs only when CAPWIN_TEST_DEBUG is set.
func logOutput() io.Writer {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	return io.Discard
}
