package setup

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/controllers/clustercache"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
)

// HyperVMachineFinalizer is the HyperVMachine finalizer.
const HyperVMachineFinalizer = "infrastructure.cluster.x-k8s.io/hypervmachine"

// NewHyperVMachineReconciler is the machine lifecycle for HyperVMachines on the Hyper-V backend.
func NewHyperVMachineReconciler(c client.Client, apiReader client.Reader, cc clustercache.ClusterCache, provider *hyperv.Provider, o Options) *machine.Reconciler {
	return &machine.Reconciler{
		Client:           c,
		APIReader:        apiReader,
		ClusterCache:     cc,
		WatchFilterValue: o.WatchFilterValue,
		PollInterval:     o.PollInterval,
		TaskPollInterval: o.TaskPollInterval,
		Kind: machine.Kind{
			Name:       "hypervmachine",
			Finalizer:  HyperVMachineFinalizer,
			NewObject:  func() machine.Object { return &infrav1.HyperVMachine{} },
			NewList:    func() client.ObjectList { return &infrav1.HyperVMachineList{} },
			NewCluster: func() client.Object { return &infrav1.HyperVCluster{} },
			Backend:    provider.Backend,
		},
	}
}
