package machine

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// notOwnStatus drops the update events of a machine whose status alone changed. This controller
// is the only writer of its machines' status, so such an event is the echo of its own write: the
// reconcile that wrote it already returned what comes next (a requeue, a poll, a watch). Without
// it, every status write costs one more reconcile, and with it one more read of the VM, each time
// the echo comes later than CAPI's builder's one-reconcile-per-second limit (a long queue). A
// change of spec (generation), labels, annotations, finalizers, owners or deletion goes through.
func notOwnStatus() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld == nil || e.ObjectNew == nil || !statusOnly(e.ObjectOld, e.ObjectNew)
	}}
}

// statusOnly reports whether an update changed nothing but status (and resourceVersion).
func statusOnly(before, after client.Object) bool {
	return before.GetGeneration() == after.GetGeneration() &&
		reflect.DeepEqual(before.GetLabels(), after.GetLabels()) &&
		reflect.DeepEqual(before.GetAnnotations(), after.GetAnnotations()) &&
		reflect.DeepEqual(before.GetFinalizers(), after.GetFinalizers()) &&
		reflect.DeepEqual(before.GetOwnerReferences(), after.GetOwnerReferences()) &&
		before.GetDeletionTimestamp().Equal(after.GetDeletionTimestamp())
}
