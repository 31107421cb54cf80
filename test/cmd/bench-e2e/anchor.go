package main

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/infrastructure/container"
	devv1 "sigs.k8s.io/cluster-api/test/infrastructure/docker/api/v1beta2"
	devcontrollers "sigs.k8s.io/cluster-api/test/infrastructure/docker/controllers"
	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	inmemoryserver "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server"

	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/inmemory"
)

// anchor is Cluster API's in-memory infrastructure provider (CAPD's DevCluster and DevMachine
// with the inMemory backend, the provider CAPI's own scale tests use) in a manager of its own in
// this process, on the harness's management cluster and next to CAPI's core controllers: the
// same rollout on machines whose infrastructure costs nothing.
type anchor struct {
	h      *harness.Harness
	c      client.Client // with the in-memory provider's kinds; reads from the apiserver
	mgr    ctrl.Manager
	mem    inmemoryruntime.Manager
	mux    *inmemoryserver.WorkloadClustersMux
	cancel context.CancelFunc
}

// devCRDs are the in-memory provider's kinds the anchor uses.
var devCRDs = []string{"devclusters", "devmachines", "devmachinetemplates"}

// startAnchor installs the in-memory provider's CRDs and starts its DevCluster and DevMachine
// controllers, with the concurrency capwin's machine controllers have in the run.
func startAnchor(ctx context.Context, h *harness.Harness, concurrency int) (*anchor, error) {
	cfg := h.Management.Env.Config
	dir, err := envtest.ModuleDir("sigs.k8s.io/cluster-api/test")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, k := range devCRDs {
		paths = append(paths, filepath.Join(dir, "infrastructure", "docker", "config", "crd", "bases", "infrastructure.cluster.x-k8s.io_"+k+".yaml"))
	}
	if _, err := crenvtest.InstallCRDs(cfg, crenvtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("in-memory provider CRDs: %w", err)
	}
	if err := h.Management.LabelContracts(ctx); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, devv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	cc, _, err := manager.ClusterCache(ctx, mgr, "capi-inmemory", "", clusterCache)
	if err != nil {
		return nil, err
	}
	memScheme, err := inmemory.Scheme()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &anchor{h: h, c: c, mgr: mgr, mem: inmemoryruntime.NewManager(memScheme), cancel: cancel}
	if err := a.mem.Start(ctx); err != nil {
		cancel()
		return nil, err
	}
	if a.mux, err = inmemoryserver.NewWorkloadClustersMux(a.mem, "127.0.0.1"); err != nil {
		cancel()
		return nil, err
	}
	rt, err := container.NewFakeClient() // the Docker backend's; the inMemory backend never calls it
	if err == nil {
		err = (&devcontrollers.DevMachineReconciler{Client: mgr.GetClient(), ContainerRuntime: rt, ClusterCache: cc,
			InMemoryManager: a.mem, APIServerMux: a.mux}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency})
	}
	if err == nil {
		err = (&devcontrollers.DevClusterReconciler{Client: mgr.GetClient(), ContainerRuntime: rt,
			InMemoryManager: a.mem, APIServerMux: a.mux}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: clusterConc})
	}
	if err != nil {
		a.stop()
		return nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			progress("in-memory provider manager: %v", err)
		}
	}()
	return a, nil
}

func (a *anchor) stop() {
	a.cancel()
	if a.mux != nil {
		_ = a.mux.Shutdown(context.Background())
	}
}
