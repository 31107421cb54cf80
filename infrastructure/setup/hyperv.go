package setup

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"sigs.k8s.io/cluster-api/controllers/clustercache"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/reconcilers/hypervcluster"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/reconcilers/machinetemplate"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
)

// HyperVMachineFinalizer is the HyperVMachine finalizer.
const HyperVMachineFinalizer = "infrastructure.cluster.x-k8s.io/hypervmachine"

// NewHyperVMachineReconciler is the machine lifecycle for HyperVMachines on the Hyper-V backend.
func NewHyperVMachineReconciler(c client.Client, apiReader client.Reader, cc clustercache.ClusterCache, provider *hyperv.Provider, o Options) *machine.Reconciler {
	return newMachineReconciler(c, apiReader, cc, o, machine.Kind{
		Name:           "hypervmachine",
		Finalizer:      HyperVMachineFinalizer,
		NewObject:      func() hypervisor.Object { return &infrav1.HyperVMachine{} },
		NewList:        func() client.ObjectList { return &infrav1.HyperVMachineList{} },
		NewCluster:     func() client.Object { return &infrav1.HyperVCluster{} },
		Backend:        provider.Backend,
		Admit:          admit.Webhook[*infrav1.HyperVMachine](&webhooks.HyperVMachine{}, &webhooks.HyperVMachine{}),
		AdmitCluster:   admit.Webhook[*infrav1.HyperVCluster](nil, &webhooks.HyperVCluster{}),
		ClusterChanged: failedOverMachines(c),
	})
}

// HyperVProvider is the Hyper-V provider of the manager: o's host connections (new ones when
// nil) and login gate, login Secrets from secrets, and the VMs per host it places by, counted
// from the manager's HyperVMachine informer.
func HyperVProvider(ctx context.Context, mgr ctrl.Manager, secrets client.Reader, o Options) (*hyperv.Provider, error) {
	conns := o.Conns
	if conns == nil {
		conns = &hyperv.Conns{}
	}
	if conns.Gate == nil {
		conns.Gate = o.Gate
	}
	if conns.GuestWatch == 0 {
		conns.GuestWatch = hyperv.DefaultGuestWatch
	}
	p := &hyperv.Provider{Client: mgr.GetClient(), Secrets: secrets, Conns: conns, IdentityNamespace: o.IdentityNamespace}
	informer, err := mgr.GetCache().GetInformer(ctx, &infrav1.HyperVMachine{})
	if err != nil {
		return nil, fmt.Errorf("get the HyperVMachine informer: %w", err)
	}
	reg, err := informer.AddEventHandler(&p.Placements)
	if err != nil {
		return nil, fmt.Errorf("count the HyperVMachines per host: %w", err)
	}
	p.Placements.WaitFor(reg)
	return p, nil
}

// hyperVReconcilers registers the HyperVCluster and HyperVMachine controllers and returns the latter.
func hyperVReconcilers(ctx context.Context, mgr ctrl.Manager, cc clustercache.ClusterCache, secrets client.Reader, o Options) (*machine.Reconciler, error) {
	provider, err := HyperVProvider(ctx, mgr, secrets, o)
	if err != nil {
		return nil, err
	}
	if err := (&hypervcluster.Reconciler{
		Client: mgr.GetClient(), Provider: provider, WatchFilterValue: o.WatchFilterValue, Recheck: o.HostRecheck,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: max(o.HyperVClusterConcurrency, 1)}); err != nil {
		return nil, err
	}
	if err := (&machinetemplate.HyperVReconciler{Client: mgr.GetClient(), WatchFilterValue: o.WatchFilterValue}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 2}); err != nil {
		return nil, err
	}
	r := NewHyperVMachineReconciler(mgr.GetClient(), mgr.GetAPIReader(), cc, provider, o)
	if conns := provider.Conns; conns.GuestWatch > 0 && conns.Wake == nil {
		r.Wakes = &machine.Wakes{}
		conns.Wake = r.Wakes.Wake
	}
	return r, r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: max(o.HyperVMachineConcurrency, 1)})
}
