package machine

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
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
		{"another finalizer added", func(m *infrav1.VCenterMachine) { m.Finalizers = []string{"f", "g"} }, true},
	}
	p := notOwnStatus("f")
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
	// The controller's own finalizer, added with a status write, is its own echo.
	bare := base.DeepCopy()
	bare.Finalizers = nil
	if p.Update(event.UpdateEvent{ObjectOld: bare, ObjectNew: base}) {
		t.Error("the update that adds the controller's finalizer must be dropped")
	}
}

// TestMachineWakesOnlyTheInfraMachineItOwns: a Machine's events wake its VCenterMachine only once
// the Machine owns it (or is being deleted, or the machine is not in the cache). Before, the new
// Machine's create event started a reconcile that only waited for the owner reference, and CAPI's
// per-object rate limit then held back the reconciles after it.
func TestMachineWakesOnlyTheInfraMachineItOwns(t *testing.T) {
	ref := func(kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name}
	}
	vm := func(name string, owners ...metav1.OwnerReference) *infrav1.VCenterMachine {
		return &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners}}
	}
	scheme := runtime.NewScheme()
	if err := infrav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Kind: Kind{NewObject: func() hypervisor.Object { return &infrav1.VCenterMachine{} }},
		Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(
			vm("new", ref("MachineSet", "ms")), vm("owned", ref("MachineSet", "ms"), ref("Machine", "m")), vm("other", ref("Machine", "m2"))).Build()}
	toInfra := r.machineToInfra(infrav1.GroupVersion.WithKind("VCenterMachine"))
	machine := func(infra string, deleting bool) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"},
			Spec: clusterv1.MachineSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterMachine", Name: infra}}}
		if deleting {
			m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			m.Finalizers = []string{"x"}
		}
		return m
	}
	for _, c := range []struct {
		name    string
		machine *clusterv1.Machine
		wake    bool
	}{
		{"machine not owned yet", machine("new", false), false},
		{"machine owned by the Machine", machine("owned", false), true},
		{"machine owned by another Machine", machine("other", false), false},
		{"Machine being deleted", machine("new", true), true},
		{"machine not in the cache", machine("missing", false), true},
	} {
		got := toInfra(context.Background(), c.machine)
		if woken := len(got) == 1 && got[0].Name == c.machine.Spec.InfrastructureRef.Name; woken != c.wake || len(got) > 1 {
			t.Errorf("%s: enqueued %v, want the machine woken %v", c.name, got, c.wake)
		}
	}
}
