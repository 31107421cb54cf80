// Package badinput holds the checks of the bad input tests (objects stored while the admission
// webhooks were not running): the webhook rejects a row, and the reconciler refuses the object.
// Its own suite covers the infrastructure kinds; bootstrap/reconcilers/windowsconfig uses the
// checks for WindowsConfigs.
package badinput

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/util/conditions"

	"github.com/capwin/capwin/internal/admit"
)

// Object is a stored object with conditions.
type Object interface {
	client.Object
	conditions.Getter
}

// Rejects checks that a webhook's error rejects the field at path.
func Rejects(g Gomega, err error, path string) {
	var status apierrors.APIStatus
	g.Expect(errors.As(err, &status)).To(BeTrue(), "the webhook must reject it: %v", err)
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	g.Expect(fields).To(ContainElement(path), "%v", err)
}

// WaitCondition waits until obj's condition has the reason and returns its message; obj is
// re-read into.
func WaitCondition(t *testing.T, c client.Client, obj Object, condition, reason string) string {
	t.Helper()
	var msg string
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		cond := conditions.Get(obj, condition)
		g.Expect(cond).NotTo(BeNil(), "%s has no %s condition yet", obj.GetName(), condition)
		g.Expect(cond.Reason).To(Equal(reason), "%+v", cond)
		msg = cond.Message
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	return msg
}

// ExpectRefused waits for obj's condition to say InvalidSpec and checks that its message names
// the bad field at path and that a Warning event says the same.
func ExpectRefused(t *testing.T, c client.Client, obj Object, condition, path string) {
	t.Helper()
	msg := WaitCondition(t, c, obj, condition, admit.InvalidSpecReason)
	g := NewWithT(t)
	g.Expect(msg).To(ContainSubstring(path))
	g.Eventually(func(g Gomega) {
		events := &eventsv1.EventList{}
		g.Expect(c.List(context.Background(), events, client.InNamespace(obj.GetNamespace()))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.UID == obj.GetUID() && e.Reason == admit.InvalidSpecReason {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(notes).To(ContainElement(ContainSubstring(path)))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}
