package machine

import (
	"context"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/owner"
)

// notOwnStatus drops the update events of a machine whose status alone changed. This controller
// is the only writer of its machines' status, so such an event is the echo of its own write: the
// reconcile that wrote it already returned what comes next (a requeue, a poll, a watch). Without
// it, every status write costs one more reconcile, and with it one more read of the VM, each time
// the echo comes later than CAPI's builder's one-reconcile-per-second limit (a long queue). A
// change of spec (generation), labels, annotations, finalizers, owners or deletion goes through.
//
// The controller's own finalizer, added by the reconcile that goes on to wait for the bootstrap
// data, is an echo too: its reconcile would only use up CAPI's one-per-second budget, and the
// reconcile that the bootstrap data starts (and that sends the clone) would wait for it.
func notOwnStatus(finalizer string) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld == nil || e.ObjectNew == nil || !ownWrite(e.ObjectOld, e.ObjectNew, finalizer)
	}}
}

// ownWrite reports whether an update changed nothing but status (and resourceVersion) and, at
// most, added finalizer.
func ownWrite(before, after client.Object, finalizer string) bool {
	finalizers := before.GetFinalizers()
	if !slices.Contains(finalizers, finalizer) {
		finalizers = append(slices.Clone(finalizers), finalizer)
	}
	return before.GetGeneration() == after.GetGeneration() &&
		reflect.DeepEqual(before.GetLabels(), after.GetLabels()) &&
		reflect.DeepEqual(before.GetAnnotations(), after.GetAnnotations()) &&
		(reflect.DeepEqual(before.GetFinalizers(), after.GetFinalizers()) || slices.Equal(finalizers, after.GetFinalizers())) &&
		reflect.DeepEqual(before.GetOwnerReferences(), after.GetOwnerReferences()) &&
		before.GetDeletionTimestamp().Equal(after.GetDeletionTimestamp())
}

// machineToInfra enqueues the infrastructure machine a Machine references, once the Machine owns
// it (or is being deleted, or the machine is not in the cache). A new Machine's create event comes
// before the Machine controller sets the owner reference; a reconcile then only waits for it, and
// the owner reference's own event wakes the machine anyway.
func (r *Reconciler) machineToInfra(gvk schema.GroupVersionKind) handler.MapFunc {
	toInfra := util.MachineToInfrastructureMapFunc(gvk)
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		reqs := toInfra(ctx, o)
		if len(reqs) != 1 || !o.GetDeletionTimestamp().IsZero() {
			return reqs
		}
		obj := r.Kind.NewObject()
		if r.Client.Get(ctx, reqs[0].NamespacedName, obj, client.UnsafeDisableDeepCopy) == nil && !owner.MachineOwns(obj, o.GetName()) { // read only
			return nil
		}
		return reqs
	}
}

// isPaused reports whether the machine is paused: its Cluster's spec.paused or its own
// cluster.x-k8s.io/paused annotation (CAPI's rule).
func isPaused(cluster *clusterv1.Cluster, obj client.Object) bool {
	return ptr.Deref(cluster.Spec.Paused, false) || annotations.HasPaused(obj)
}

// setNotPaused sets the Paused condition of a machine that is not paused, as CAPI's
// paused.EnsurePausedCondition would, but in memory: the reconcile's status patch writes it.
func setNotPaused(obj hypervisor.Object) {
	conditions.Set(obj, metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse,
		Reason: clusterv1.NotPausedReason, ObservedGeneration: obj.GetGeneration()})
}
