package setup

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// failedOverMachines maps a HyperVCluster of a failover cluster to its HyperVMachines whose VM
// ran on a host the host check now finds unavailable: the cluster has moved (or is moving) those
// VMs to other nodes, and a provisioned machine is otherwise not looked at again until something
// else changes, so status.vm.host would go on naming the failed node. Standalone hosts map to
// nothing: their VMs cannot move.
func failedOverMachines(c client.Client) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		hc, ok := o.(*infrav1.HyperVCluster)
		if !ok || hc.Spec.FailoverCluster == nil || hc.Labels[clusterv1.ClusterNameLabel] == "" {
			return nil
		}
		down := map[string]bool{}
		for _, h := range hc.Status.Hosts {
			if !h.Available {
				down[h.Name] = true
			}
		}
		if len(down) == 0 {
			return nil
		}
		list := &infrav1.HyperVMachineList{}
		if err := c.List(ctx, list, client.InNamespace(hc.Namespace),
			client.MatchingLabels{clusterv1.ClusterNameLabel: hc.Labels[clusterv1.ClusterNameLabel]}); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, m := range list.Items {
			if down[m.Status.VM.Host] {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
			}
		}
		return out
	}
}
