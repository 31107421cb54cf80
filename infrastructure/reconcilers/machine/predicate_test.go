package machine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestNotOwnStatus: an update that changed the status alone is dropped; any change the
// controller must see (spec, labels, annotations, finalizers, owners, deletion) goes through.
func TestNotOwnStatus(t *testing.T) {
	base := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 1, ResourceVersion: "1",
		Labels: map[string]string{"a": "b"}, Finalizers: []string{"f"}}}
	now := metav1.Now()
	cases := []struct {
		name   string
		change func(m *infrav1.VCenterMachine)
		passes bool
	}{
		{"status and resourceVersion", func(m *infrav1.VCenterMachine) { m.ResourceVersion = "2"; m.Status.Task = "task-1" }, false},
		{"spec (generation)", func(m *infrav1.VCenterMachine) { m.Generation = 2 }, true},
		{"label", func(m *infrav1.VCenterMachine) { m.Labels = map[string]string{"a": "c"} }, true},
		{"annotation", func(m *infrav1.VCenterMachine) { m.Annotations = map[string]string{"cluster.x-k8s.io/paused": ""} }, true},
		{"finalizer", func(m *infrav1.VCenterMachine) { m.Finalizers = nil }, true},
		{"owner", func(m *infrav1.VCenterMachine) {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "Machine", Name: "m"}}
		}, true},
		{"deletion", func(m *infrav1.VCenterMachine) { m.DeletionTimestamp = &now }, true},
	}
	p := notOwnStatus()
	for _, c := range cases {
		updated := base.DeepCopy()
		c.change(updated)
		if got := p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: updated}); got != c.passes {
			t.Errorf("%s: update passes = %v, want %v", c.name, got, c.passes)
		}
	}
	if !p.Create(event.CreateEvent{Object: base}) || !p.Delete(event.DeleteEvent{Object: base}) {
		t.Error("create and delete events must pass")
	}
}
