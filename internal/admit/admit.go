// Package admit lets a reconciler refuse what the admission webhooks would have rejected. The API
// server always enforces the CRD schema, but the webhooks may be missing: objects written while
// they were down or not installed, `kubectl apply --validate=false` behind a failurePolicy
// Ignore, or a restore from a backup straight into etcd. Each reconciler runs the webhook's own
// create path (defaults, then validation) on the object it reads, before it touches anything
// outside the management cluster, so a new webhook rule holds in the reconcilers too.
package admit

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"sigs.k8s.io/cluster-api/util/conditions"
)

// InvalidSpecReason is the condition reason of an object the webhooks would have rejected.
const InvalidSpecReason = "InvalidSpec"

// Recheck is how long a refused object waits before it is checked again without a change; a
// change of the object (or a manager with other rules) brings it back at once.
const Recheck = 10 * time.Minute

// Check applies an admission webhook's defaults to an object in place and returns the error its
// create would be rejected with (nil when it would be admitted).
type Check func(ctx context.Context, obj runtime.Object) error

// Webhook is the Check of a webhook's create path for objects of type T; d may be nil (a webhook
// without defaults). An object of another type is not checked.
func Webhook[T runtime.Object](d admission.Defaulter[T], v admission.Validator[T]) Check {
	return func(ctx context.Context, obj runtime.Object) error {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		if d != nil {
			if err := d.Default(ctx, o); err != nil {
				return err
			}
		}
		_, err := v.ValidateCreate(ctx, o)
		return err
	}
}

// Object is what Refuse marks: an API object with conditions.
type Object interface {
	runtime.Object
	conditions.Setter
}

// Refuse marks obj as refused: condition condition False with reason InvalidSpec and err (which
// names every bad field) as message, and a Warning event when rec is set. The caller stops the
// reconcile there and requeues after Recheck.
func Refuse(obj Object, condition string, err error, rec events.EventRecorder) {
	msg := err.Error() + " (the admission webhook would have rejected it; correct the object)"
	conditions.Set(obj, metav1.Condition{Type: condition, Status: metav1.ConditionFalse, Reason: InvalidSpecReason, Message: msg})
	if rec != nil {
		rec.Eventf(obj, nil, corev1.EventTypeWarning, InvalidSpecReason, "Reconcile", "%s", msg)
	}
}
