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

func statusOnly(old, new client.Object) bool {
	return old.GetGeneration() == new.GetGeneration() &&
		reflect.DeepEqual(old.GetLabels(), new.GetLabels()) &&
		reflect.DeepEqual(old.GetAnnotations(), new.GetAnnotations()) &&
		reflect.DeepEqual(old.GetFinalizers(), new.GetFinalizers()) &&
		reflect.DeepEqual(old.GetOwnerReferences(), new.GetOwnerReferences()) &&
		old.GetDeletionTimestamp().Equal(new.GetDeletionTimestamp())
}
