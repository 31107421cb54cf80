package windowsconfig

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/event"
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
