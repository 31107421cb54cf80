package machine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/guestos"
)

// watchNodes wakes the machine whose guest registers a Node that has no providerID yet, so the
// Node is linked as soon as it appears instead of at the next guest poll (10 s by default; a
// rollout waits for every new Node's link). The watch is added once per workload cluster.
func (r *Reconciler) watchNodes(ctx context.Context, cluster types.NamespacedName) error {
	if r.controller == nil {
		return nil
	}
	return r.ClusterCache.Watch(ctx, cluster, clustercache.NewWatcher(clustercache.WatcherOptions{
		Name:         r.Kind.Name + "-watchNodes",
		Watcher:      r.controller,
		Kind:         &corev1.Node{},
		EventHandler: handler.EnqueueRequestsFromMapFunc(r.nodeToMachines(cluster)),
		Predicates: []predicate.Predicate{predicate.NewPredicateFuncs(func(o client.Object) bool {
			n, ok := o.(*corev1.Node)
			return ok && n.Spec.ProviderID == ""
		})},
	}))
}

// nodeToMachines maps a Node of the cluster to the machines whose computer name it carries.
func (r *Reconciler) nodeToMachines(cluster types.NamespacedName) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		list := r.Kind.NewList()
		var match client.ListOption = client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}
		if r.indexed {
			match = client.MatchingFields{computerNameField: computerNameKey(cluster.Name, o.GetName())}
		}
		if err := r.Client.List(ctx, list, client.InNamespace(cluster.Namespace), match, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		var out []ctrl.Request
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			m, ok := item.(hypervisor.Object)
			if ok && m.GetMachineStatus().ComputerName != "" && guestos.NodeName(m.GetMachineStatus().ComputerName) == o.GetName() {
				out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)})
			}
			return nil
		})
		return out
	}
}
