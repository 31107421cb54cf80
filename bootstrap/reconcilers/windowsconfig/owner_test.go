package windowsconfig

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// TestMachineChangesPassOnlyWhatTheReconcilerReads: a Machine update wakes its WindowsConfig only
// when a field the reconciler reads changed, not on CAPI's many status writes.
func TestMachineChangesPassOnlyWhatTheReconcilerReads(t *testing.T) {
	base := func() *clusterv1.Machine {
		return &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
			Spec: clusterv1.MachineSpec{ClusterName: "win", Version: "v1.36.3", Bootstrap: clusterv1.Bootstrap{
				ConfigRef: clusterv1.ContractVersionedObjectReference{Kind: "WindowsConfig", Name: "m"}}},
		}
	}
	for name, c := range map[string]struct {
		change func(*clusterv1.Machine)
		wake   bool
	}{
		"phase":           {func(m *clusterv1.Machine) { m.Status.Phase = "Provisioning" }, false},
		"conditions":      {func(m *clusterv1.Machine) { m.Status.Conditions = []metav1.Condition{{Type: "Ready"}} }, false},
		"annotations":     {func(m *clusterv1.Machine) { m.Annotations = map[string]string{"a": "b"} }, false},
		"resourceVersion": {func(m *clusterv1.Machine) { m.ResourceVersion = "2" }, false},
		"data secret":     {func(m *clusterv1.Machine) { m.Spec.Bootstrap.DataSecretName = ptr.To("m") }, true},
		"config ref":      {func(m *clusterv1.Machine) { m.Spec.Bootstrap.ConfigRef.Name = "n" }, true},
		"version":         {func(m *clusterv1.Machine) { m.Spec.Version = "v1.37.1" }, true},
		"node":            {func(m *clusterv1.Machine) { m.Status.NodeRef.Name = "win-abc" }, true},
		"deletion":        {func(m *clusterv1.Machine) { m.DeletionTimestamp = ptr.To(metav1.NewTime(time.Now())) }, true},
		"labels":          {func(m *clusterv1.Machine) { m.Labels["x"] = "y" }, true},
		"addresses": {func(m *clusterv1.Machine) {
			m.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.5"}}
		}, false},
		"computer name": {func(m *clusterv1.Machine) {
			m.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineHostName, Address: "WIN-ABC12"}}
		}, true},
	} {
		after := base()
		c.change(after)
		if got := machineChanges.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: after}); got != c.wake {
			t.Errorf("%s: wakes the config: %v, want %v", name, got, c.wake)
		}
	}
	if !machineChanges.Create(event.CreateEvent{Object: base()}) || !machineChanges.Delete(event.DeleteEvent{Object: base()}) {
		t.Error("a Machine's create and delete wake its config")
	}
}

// TestMachineWakesOnlyTheConfigItOwns: a Machine's event wakes its WindowsConfig only once the
// Machine owns it (or is being deleted). A new Machine's create event comes before CAPI's Machine
// controller sets the owner reference, and the reconcile it started had nothing to do but made
// CAPI's per-object rate limit hold back the one that writes the data by a second.
func TestMachineWakesOnlyTheConfigItOwns(t *testing.T) {
	owner := func(kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name}
	}
	cfg := func(name string, owners ...metav1.OwnerReference) *bootstrapv1.WindowsConfig {
		return &bootstrapv1.WindowsConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners}}
	}
	scheme := runtime.NewScheme()
	if err := bootstrapv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		cfg("new", owner("MachineSet", "ms")),
		cfg("owned", owner("MachineSet", "ms"), owner("Machine", "m")),
		cfg("other", owner("Machine", "m2")),
	).Build()}
	machine := func(config, kind string, deleting bool) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"},
			Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: kind, Name: config}}}}
		if deleting {
			m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return m
	}
	for _, c := range []struct {
		name    string
		machine *clusterv1.Machine
		wake    bool
	}{
		{"config not owned yet", machine("new", "WindowsConfig", false), false},
		{"config owned by the Machine", machine("owned", "WindowsConfig", false), true},
		{"config owned by another Machine", machine("other", "WindowsConfig", false), false},
		{"Machine being deleted", machine("new", "WindowsConfig", true), true},
		{"config not in the cache", machine("missing", "WindowsConfig", false), true},
		{"another bootstrap provider's config", machine("owned", "KubeadmConfig", false), false},
	} {
		got := r.machineToConfig(context.Background(), c.machine)
		if woken := len(got) == 1 && got[0].Name == c.machine.Spec.Bootstrap.ConfigRef.Name; woken != c.wake || len(got) > 1 {
			t.Errorf("%s: enqueued %v, want the config woken %v", c.name, got, c.wake)
		}
	}
}
