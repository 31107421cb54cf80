package windowsconfig

import (
	"context"
	"maps"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/internal/owner"
)

// ownerMachine returns the Machine that owns the config, or nil while it has none (CAPI's Machine
// controller sets the owner reference when it picks the config up).
func (r *Reconciler) ownerMachine(ctx context.Context, cfg *bootstrapv1.WindowsConfig) (*clusterv1.Machine, error) {
	for _, ref := range cfg.OwnerReferences {
		if !owner.IsMachine(ref) {
			continue
		}
		m := &clusterv1.Machine{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: ref.Name}, m); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return m, nil
	}
	ctrl.LoggerFrom(ctx).V(4).Info("WindowsConfig has no owner Machine yet")
	return nil, nil
}

// machineToConfig enqueues the WindowsConfig a Machine references, once the Machine owns it (or
// is being deleted). Before that a reconcile has nothing to do (it needs its owner Machine), and
// it would cost the new machine a second: CAPI's per-object rate limit then holds back the
// reconcile that the owner reference's arrival starts, which writes the data. (A new Machine's
// create event comes before the Machine controller sets the owner reference, about a second
// after the config's own first reconcile.)
func (r *Reconciler) machineToConfig(ctx context.Context, o client.Object) []ctrl.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := m.Spec.Bootstrap.ConfigRef
	if ref.Kind != "WindowsConfig" || ref.APIGroup != bootstrapv1.GroupVersion.Group {
		return nil
	}
	key := client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}
	cfg := &bootstrapv1.WindowsConfig{}
	if m.DeletionTimestamp.IsZero() && r.Client.Get(ctx, key, cfg, client.UnsafeDisableDeepCopy) == nil && !owner.MachineOwns(cfg, m.Name) { // read only
		return nil // the owner reference's own event wakes the config
	}
	return []ctrl.Request{{NamespacedName: key}}
}

// clusterToConfigs enqueues every WindowsConfig referenced by a Machine of the cluster.
func (r *Reconciler) clusterToConfigs(ctx context.Context, o client.Object) []ctrl.Request {
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(o.GetNamespace()),
		client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	var out []ctrl.Request
	for i := range machines.Items {
		out = append(out, r.machineToConfig(ctx, &machines.Items[i])...)
	}
	return out
}

// machineChanges lets through a Machine's create, delete and generic events, and an update only
// when a field this reconciler reads changed. CAPI's Machine controller writes a Machine's status
// many times (in a rollout, on every MachineSet and MachineDeployment change), and each of those
// writes would cost a WindowsConfig reconcile, held back by CAPI's per-object rate limit.
var machineChanges = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	before, ok1 := e.ObjectOld.(*clusterv1.Machine)
	after, ok2 := e.ObjectNew.(*clusterv1.Machine)
	return !ok1 || !ok2 || readFieldsChanged(before, after)
}}

// readFieldsChanged reports whether a Machine's fields that the reconciler reads differ: its
// bootstrap reference and data Secret, version, cluster, Node, deletion, labels and computer name.
func readFieldsChanged(a, b *clusterv1.Machine) bool {
	return a.Spec.Bootstrap.ConfigRef != b.Spec.Bootstrap.ConfigRef ||
		ptr.Deref(a.Spec.Bootstrap.DataSecretName, "") != ptr.Deref(b.Spec.Bootstrap.DataSecretName, "") ||
		a.Spec.Version != b.Spec.Version || a.Spec.ClusterName != b.Spec.ClusterName ||
		a.Status.NodeRef != b.Status.NodeRef ||
		!a.DeletionTimestamp.Equal(b.DeletionTimestamp) || !maps.Equal(a.Labels, b.Labels) ||
		computerName(a) != computerName(b)
}
