package machine

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// writer writes what one reconcile changed on its machine with as few requests as it can: the
// whole status (conditions included) in one status patch locked to the resourceVersion the
// reconcile read, then metadata and spec in a plain merge patch only when they changed. CAPI's
// patch helper spends three requests on the same change (read the latest object, patch the
// conditions onto it, patch the rest of status). Only this controller writes its machines'
// status, so the lock almost always holds; when it does not (the cache was behind, or the
// object changed meanwhile) the write falls back to the helper, which merges the owned
// conditions into the latest object, as before.
type writer struct {
	c      client.Client
	before hypervisor.Object
}

func newWriter(c client.Client, obj hypervisor.Object) *writer {
	return &writer{c: c, before: obj.DeepCopyObject().(hypervisor.Object)}
}

// write sends obj's changes since the writer was made; obj's resourceVersion follows the writes,
// so a writer made from obj afterwards locks to what was written.
func (w *writer) write(ctx context.Context, obj hypervisor.Object, opts ...patch.Option) error {
	if reflect.DeepEqual(obj, w.before) {
		return nil
	}
	// rest is the object as it was with obj's status: what differs from it is metadata or spec.
	rest := w.before.DeepCopyObject().(hypervisor.Object)
	*rest.GetMachineStatus() = *obj.GetMachineStatus()
	restChanged := !reflect.DeepEqual(rest, obj)
	if !reflect.DeepEqual(w.before.GetMachineStatus(), obj.GetMachineStatus()) {
		// base: obj with the old status, so the patch holds status and the lock only.
		base := obj.DeepCopyObject().(hypervisor.Object)
		*base.GetMachineStatus() = *w.before.GetMachineStatus().DeepCopy()
		base.SetResourceVersion(w.before.GetResourceVersion())
		after := obj.DeepCopyObject().(hypervisor.Object)
		err := w.c.Status().Patch(ctx, after, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsConflict(err):
			return w.fallback(ctx, obj, opts)
		case apierrors.IsNotFound(err) && !obj.GetDeletionTimestamp().IsZero():
			return nil // deleted meanwhile: nothing left to write
		case err != nil:
			return err
		}
		obj.SetResourceVersion(after.GetResourceVersion())
	}
	if !restChanged {
		return nil
	}
	// base: obj with the old metadata and spec, at obj's resourceVersion (no lock).
	base := w.before.DeepCopyObject().(hypervisor.Object)
	*base.GetMachineStatus() = *obj.GetMachineStatus().DeepCopy()
	base.SetResourceVersion(obj.GetResourceVersion())
	after := obj.DeepCopyObject().(hypervisor.Object)
	if err := w.c.Patch(ctx, after, client.MergeFrom(base)); err != nil {
		return client.IgnoreNotFound(err)
	}
	obj.SetResourceVersion(after.GetResourceVersion())
	return nil
}

// fallback writes through CAPI's patch helper from the object the reconcile started with.
func (w *writer) fallback(ctx context.Context, obj hypervisor.Object, opts []patch.Option) error {
	helper, err := patch.NewHelper(w.before, w.c)
	if err != nil {
		return err
	}
	return helper.Patch(ctx, obj, opts...)
}
