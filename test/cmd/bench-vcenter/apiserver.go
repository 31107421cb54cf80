package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/benchutil"
)

// env is the controller under test as the workload sees it.
type env struct {
	// mode names the API side ("kube-apiserver"), requestUnit what its requests are.
	mode, requestUnit string
	// k8s is the client the workload writes with; kubeconfig reaches the same API server.
	k8s        client.Client
	kubeconfig []byte
	// progress counts the VCenterMachines that exist and those provisioned.
	progress func(context.Context) (live, provisioned int, err error)
	// reconciles counts the machine controller's reconciles and their summed time.
	reconciles func() (int, time.Duration)
	stop       func()
}

// startAPIServer runs kube-apiserver + etcd and the infrastructure controllers exactly as
// main.go wires them (setup.Reconcilers); every request of the manager is counted into reqs.
func startAPIServer(ctx context.Context, o setup.Options, sessions *session.Sessions, reqs *benchutil.Requests) (*env, error) {
	api, err := envtest.Start()
	if err != nil {
		return nil, err
	}
	stop := func() { _ = api.Stop() }
	cfg := rest.CopyConfig(api.Config) // as the manager's own rest.Config
	reqs.Wrap(cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: manager.CacheOptions("", 10*time.Minute), Client: manager.ClientOptions(),
	})
	if err == nil {
		o.Sessions = sessions
		err = setup.Reconcilers(ctx, mgr, o)
	}
	if err != nil {
		stop()
		return nil, err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		stop()
		return nil, fmt.Errorf("cache did not sync")
	}
	// The workload writes with a client of its own, so only the manager's requests are counted,
	// and reads the manager's cache.
	k8s, err := client.New(api.Config, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		stop()
		return nil, err
	}
	progress := func(ctx context.Context) (live, provisioned int, err error) {
		list := &infrav1.VCenterMachineList{}
		// Read only, every 100 ms: no deep copy of every machine (it made the benchmark's own CPU
		// grow with the square of the machines, counted in the controller's CPU per VM).
		if err := mgr.GetClient().List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return 0, 0, err
		}
		for _, m := range list.Items {
			if ptr.Deref(m.Status.Initialization.Provisioned, false) {
				provisioned++
			}
		}
		return len(list.Items), provisioned, nil
	}
	return &env{mode: "kube-apiserver", requestUnit: "API requests", k8s: k8s, kubeconfig: api.KubeConfig, progress: progress, stop: stop,
		reconciles: func() (int, time.Duration) { return benchutil.Reconciles("vcentermachine") }}, nil
}
