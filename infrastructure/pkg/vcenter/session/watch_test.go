package session

import (
	"fmt"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// testVMs follows a VM's power, addresses and three extraConfig values, compared as the VM
// services compare theirs: an option by its value, a value that was removed as unset.
var testVMs = VMWatch{
	Paths: []string{"runtime.powerState", "guest.net", statusPath, metadataPath, userDataPath},
	Value: func(_ string, val any) string {
		switch v := val.(type) {
		case nil:
			return ""
		case types.OptionValue:
			return fmt.Sprint(v.Value)
		}
		return fmt.Sprint(val)
	},
}

const (
	statusPath   = `config.extraConfig["status"]`
	metadataPath = `config.extraConfig["metadata.encoding"]`
	userDataPath = `config.extraConfig["userdata.encoding"]`
)

var (
	machineA = k8stypes.NamespacedName{Namespace: "ns", Name: "a"}
	taskRef  = types.ManagedObjectReference{Type: "Task", Value: "task-1"}
	vmA      = types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-1"}
)

func update(ref types.ManagedObjectReference, kind types.ObjectUpdateKind, changes ...types.PropertyChange) types.ObjectUpdate {
	return types.ObjectUpdate{Obj: ref, Kind: kind, ChangeSet: changes}
}

func woke(t *testing.T, r *registry, gen int, u types.ObjectUpdate, want bool) {
	t.Helper()
	machine, ok := r.apply(gen, u)
	if ok != want || (ok && machine != machineA) {
		t.Fatalf("apply(%s %s %v) = %v, %v; want a wake: %v", u.Kind, u.Obj.Value, u.ChangeSet, machine, ok, want)
	}
}

// TestRegistryTask: a task wakes its machine once, when it ends, and leaves the view with the
// next object added.
func TestRegistryTask(t *testing.T) {
	r := newRegistry(testVMs)
	gen := r.restart()
	r.task(machineA, taskRef)
	add, remove, _ := r.pending(gen, false)
	if len(add) != 1 || len(remove) != 0 {
		t.Fatalf("pending = %v, %v", add, remove)
	}
	running := types.PropertyChange{Name: "info.state", Val: types.TaskInfoStateRunning}
	done := types.PropertyChange{Name: "info.state", Val: types.TaskInfoStateSuccess}
	woke(t, r, gen, update(taskRef, types.ObjectUpdateKindEnter, running), false)
	woke(t, r, gen, update(taskRef, types.ObjectUpdateKindModify, done), true)
	woke(t, r, gen, update(taskRef, types.ObjectUpdateKindEnter, done), false) // sent again: once is enough
	r.vm(machineA, vmA, nil)
	add, remove, _ = r.pending(gen, false)
	if len(add) != 1 || add[0] != vmA || len(remove) != 1 || remove[0] != taskRef {
		t.Fatalf("pending = %v, %v; want the VM in and the task out", add, remove)
	}
	// A task on the followed VM shows on the VM: it is not followed itself.
	r.task(machineA, types.ManagedObjectReference{Type: "Task", Value: "task-2"})
	if add, _, _ = r.pending(gen, false); len(add) != 0 {
		t.Fatalf("pending = %v; want nothing", add)
	}
}

// TestRegistryVM: a VM wakes its machine when a watched value differs from what the machine's
// reconcile last read, and when it is deleted.
func TestRegistryVM(t *testing.T) {
	r := newRegistry(testVMs)
	gen := r.restart()
	off := types.DynamicProperty{Name: "runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOff}
	r.vm(machineA, vmA, []types.DynamicProperty{off})
	r.pending(gen, false)
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindEnter, types.PropertyChange{Name: off.Name, Val: off.Val}), false)
	on := types.PropertyChange{Name: "runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOn}
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, on), true)
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, on), false)
	ip := types.PropertyChange{Name: "guest.net", Val: types.ArrayOfGuestNicInfo{GuestNicInfo: []types.GuestNicInfo{{MacAddress: "00:50:56:aa:bb:cc", IpAddress: []string{"10.0.0.5"}}}}}
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, ip), true)
	report := types.PropertyChange{Name: statusPath, Val: types.OptionValue{Key: "status", Value: `{"step":"join"}`}}
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, report), true)
	cleared := types.PropertyChange{Name: userDataPath, Val: nil, Op: types.PropertyChangeOpRemove}
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, cleared), false) // it was never set
	delivered := types.PropertyChange{Name: metadataPath, Val: types.OptionValue{Key: "metadata.encoding", Value: "base64"}}
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, delivered), true)
	// A new loop's first update carries every value: unchanged ones wake nothing.
	gen = r.restart()
	r.pending(gen, false)
	woke(t, r, gen-1, update(vmA, types.ObjectUpdateKindModify, ip), false) // the old loop is ignored
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindEnter, on, ip, report, delivered), false)
	woke(t, r, gen, update(vmA, types.ObjectUpdateKindLeave), true)
	if machines := r.machines(); len(machines) != 0 {
		t.Fatalf("machines after the VM left: %v", machines)
	}
}

// TestRegistryMissing: objects vCenter no longer knows are dropped and their machines named.
func TestRegistryMissing(t *testing.T) {
	r := newRegistry(testVMs)
	r.restart()
	r.task(machineA, taskRef)
	if machines := r.missing([]types.ManagedObjectReference{taskRef}); len(machines) != 1 || machines[0] != machineA {
		t.Fatalf("missing = %v", machines)
	}
	var nilRegistry *registry
	nilRegistry.task(machineA, taskRef) // sessions without a watch
	if nilRegistry.watching() {
		t.Fatal("a nil registry watches nothing")
	}
}

// TestRegistryPrune: objects that are done leave the view on their own when pruned, so the
// registry of a quiet manager empties out.
func TestRegistryPrune(t *testing.T) {
	r := newRegistry(testVMs)
	gen := r.restart()
	r.task(machineA, taskRef)
	r.pending(gen, false)
	woke(t, r, gen, update(taskRef, types.ObjectUpdateKindModify, types.PropertyChange{Name: "info.state", Val: types.TaskInfoStateSuccess}), true)
	if _, remove, _ := r.pending(gen, false); len(remove) != 0 {
		t.Fatalf("pending = %v; a done task waits for new objects", remove)
	}
	if _, remove, _ := r.pending(gen, true); len(remove) != 1 || remove[0] != taskRef {
		t.Fatalf("pruned = %v; want the task out", remove)
	}
	if n := len(r.objs); n != 0 {
		t.Fatalf("%d objects left after the prune", n)
	}
}

// TestRegistrySettled: a settled machine's VM wakes nothing and leaves the view with the next
// batch; read again (its delete), it is followed again, whether it left the view or not.
func TestRegistrySettled(t *testing.T) {
	on := types.PropertyChange{Name: "runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOn}
	off := types.PropertyChange{Name: "runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOff}
	onNow := []types.DynamicProperty{{Name: on.Name, Val: on.Val}}
	for _, left := range []bool{false, true} {
		r := newRegistry(testVMs)
		gen := r.restart()
		r.vm(machineA, vmA, onNow)
		r.pending(gen, false)
		r.forget(machineA)
		woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, off), false)
		if left {
			if _, remove, _ := r.pending(gen, true); len(remove) != 1 || remove[0] != vmA {
				t.Fatalf("pruned = %v; want the settled VM out", remove)
			}
		}
		r.vm(machineA, vmA, onNow)
		if add, _, _ := r.pending(gen, false); len(add) != map[bool]int{false: 0, true: 1}[left] {
			t.Fatalf("left the view %v: pending adds %v", left, add)
		}
		woke(t, r, gen, update(vmA, types.ObjectUpdateKindModify, off), true)
	}
}
