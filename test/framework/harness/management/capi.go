package management

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/reconcilers/cluster"
	"sigs.k8s.io/cluster-api/core/reconcilers/machine"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinedeployment"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinehealthcheck"
	"sigs.k8s.io/cluster-api/core/reconcilers/machineset"
	capisetup "sigs.k8s.io/cluster-api/core/setup"
	coreadmission "sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/util/index"
)

// capiControllerName is CAPI core's manager name (user agent of its workload-cluster clients).
const capiControllerName = "cluster-api-controller-manager"

// CAPI core's flag defaults (core/main.go) that its reconcilers require.
const (
	remoteConnectionGracePeriod = 50 * time.Second
	remoteConditionsGracePeriod = 5 * time.Minute
)

// setupCAPI registers what core/main.go registers for the kinds capwin is used with: the default
// indexes (setupIndexes), CAPI's ClusterCache and the Cluster, Machine, MachineSet,
// MachineDeployment and MachineHealthCheck reconcilers (setupReconcilers), and all of CAPI's
// admission webhooks (setupWebhooks), so every path of core/config/webhook is served.
func setupCAPI(ctx context.Context, mgr ctrl.Manager, watchFilter string) (clustercache.ClusterCache, error) {
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return nil, err
	}
	secretCachingClient, err := capisetup.CreateSecretCachingClient(mgr)
	if err != nil {
		return nil, err
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient:     secretCachingClient,
		Cache:            capisetup.ClusterCacheCacheOptions(),
		Client:           capisetup.ClusterCacheClientOptions(capiControllerName, 20, 30),
		WatchFilterValue: watchFilter,
	}, concurrency(10))
	if err != nil {
		return nil, err
	}
	c, reader := mgr.GetClient(), mgr.GetAPIReader()
	for _, r := range []interface {
		SetupWithManager(context.Context, ctrl.Manager, controller.Options) error
	}{
		&cluster.Reconciler{Client: c, APIReader: reader, ClusterCache: cc, WatchFilterValue: watchFilter,
			RemoteConnectionGracePeriod: remoteConnectionGracePeriod},
		&machine.Reconciler{Client: c, APIReader: reader, ClusterCache: cc, WatchFilterValue: watchFilter,
			RemoteConditionsGracePeriod: remoteConditionsGracePeriod},
		&machineset.Reconciler{Client: c, APIReader: reader, ClusterCache: cc, WatchFilterValue: watchFilter,
			PreflightChecks: sets.New(clusterv1.MachineSetPreflightCheckAll)},
		&machinedeployment.Reconciler{Client: c, APIReader: reader, WatchFilterValue: watchFilter},
		&machinehealthcheck.Reconciler{Client: c, ClusterCache: cc, WatchFilterValue: watchFilter},
	} {
		if err := r.SetupWithManager(ctx, mgr, concurrency(10)); err != nil {
			return nil, err
		}
	}
	for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		&coreadmission.ClusterClass{Client: c},
		&coreadmission.Cluster{Client: c, ClusterCacheReader: cc},
		&coreadmission.Machine{},
		&coreadmission.MachineSet{},
		&coreadmission.MachineDeployment{},
		&coreadmission.MachineDrainRule{},
		&coreadmission.MachinePool{},
		&coreadmission.ClusterResourceSet{},
		&coreadmission.ClusterResourceSetBinding{},
		&coreadmission.MachineHealthCheck{},
		&coreadmission.ExtensionConfig{},
		&coreadmission.IPAddress{Client: reader},
		&coreadmission.IPAddressClaim{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return nil, err
		}
	}
	return cc, nil
}

func concurrency(n int) controller.Options { return controller.Options{MaxConcurrentReconciles: n} }
