package owner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestOwnedOrDeleting: an object's own events (a WindowsConfig, a VCenterMachine) start a reconcile only once a
// Machine owns it, or when it is being deleted. The MachineSet creates the config and applies it
// again a moment later, before the Machine controller sets the owner reference; those two
// reconciles had nothing to do, and CAPI's per-object rate limit then held back the one that
// writes the data by a second.
func TestOwnedOrDeleting(t *testing.T) {
	ms := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: "ms"}
	m := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m"}
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Machine", Name: "m"}
	cfg := func(deleting bool, owners ...metav1.OwnerReference) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", OwnerReferences: owners}}
		if deleting {
			c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return c
	}
	for _, c := range []struct {
		name string
		ev   func() bool
		want bool
	}{
		{"created by the MachineSet", func() bool { return OwnedOrDeleting.Create(event.CreateEvent{Object: cfg(false, ms)}) }, false},
		{"applied again by the MachineSet", func() bool {
			return OwnedOrDeleting.Update(event.UpdateEvent{ObjectOld: cfg(false, ms), ObjectNew: cfg(false, ms)})
		}, false},
		{"owned by a Machine of another API group", func() bool { return OwnedOrDeleting.Create(event.CreateEvent{Object: cfg(false, other)}) }, false},
		{"the owner reference arrives", func() bool {
			return OwnedOrDeleting.Update(event.UpdateEvent{ObjectOld: cfg(false, ms), ObjectNew: cfg(false, ms, m)})
		}, true},
		{"owned, at the manager's start", func() bool { return OwnedOrDeleting.Create(event.CreateEvent{Object: cfg(false, m)}) }, true},
		{"being deleted without an owner", func() bool {
			return OwnedOrDeleting.Update(event.UpdateEvent{ObjectOld: cfg(false), ObjectNew: cfg(true)})
		}, true},
	} {
		if got := c.ev(); got != c.want {
			t.Errorf("%s: reconcile %v, want %v", c.name, got, c.want)
		}
	}
}
