package vcenter

import (
	"fmt"
	"strings"
	"sync"

	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// vmWatchPaths are the VM properties whose change can move a machine on: power (the end of a
// power-on or power-off task, a guest shutdown), the guest's addresses, its tools (a soft
// shutdown waits for them), its bootstrap report, and the keys capwin's own reconfigure tasks
// write (metadata delivered, user data cleared, bootstrap started in the guest). The lifecycle
// reads them all in its one VM read (vmProperties), and a destroyed VM leaves the view: so the
// tasks on a followed VM need not be followed themselves.
var vmWatchPaths = append([]string{"runtime.powerState", "guest.net", "guest.toolsRunningStatus"}, vmWatchKeys[:]...)

// vmWatchKeys are the extraConfig values among vmWatchPaths.
var vmWatchKeys = [...]string{
	extraConfigPath(keyStatus), extraConfigPath(keyMetadataEncoding), extraConfigPath(keyUserDataEncoding), extraConfigPath(keyGuestRun),
}

// vmState is what the watch compares of a VM: a change wakes its machine.
type vmState struct {
	power, tools, nets string
	keys               [len(vmWatchKeys)]string
}

// set takes one property value (from a read or from an update).
func (s *vmState) set(name string, val any) {
	switch name {
	case "runtime.powerState":
		s.power = fmt.Sprint(val)
	case "guest.toolsRunningStatus":
		s.tools = fmt.Sprint(val)
	case "guest.net":
		var b strings.Builder
		if v, ok := val.(types.ArrayOfGuestNicInfo); ok {
			for _, n := range v.GuestNicInfo {
				fmt.Fprintf(&b, "%s=%s;", guest.NormalizeMAC(n.MacAddress), strings.Join(n.IpAddress, ","))
			}
		}
		s.nets = b.String()
	default:
		for i, p := range vmWatchKeys {
			if name == p {
				s.keys[i] = optionValue(val)
			}
		}
	}
}

// entry is one watched object: the machine (VCenterMachine namespace/name) it belongs to and, for
// a VM, the values last seen.
type entry struct {
	machine k8stypes.NamespacedName
	task    bool
	state   vmState
	inView  bool // added to the current loop's view
	// gone: a finished task, to leave the view with the next change of it.
	gone bool
}

// registry is what the watch of one vCenter session key follows. It outlives a session that
// vCenter ended (the next session's loop starts from it) and is dropped with the key. Reconciles
// only change it in memory: the loop does the vCenter calls.
type registry struct {
	mu     sync.Mutex
	objs   map[types.ManagedObjectReference]*entry
	signal chan struct{}
	// gen is the current loop's number; a loop that was replaced leaves the registry alone.
	gen     int
	healthy bool
}

func newRegistry() *registry {
	return &registry{objs: map[types.ManagedObjectReference]*entry{}, signal: make(chan struct{}, 1)}
}

func (r *registry) poke() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// task follows a task capwin started for a machine until it ends, unless its VM is followed:
// what its tasks do shows on the VM (vmWatchPaths), and a task that fails is seen at the
// safety-net poll.
func (r *registry) task(machine k8stypes.NamespacedName, ref types.ManagedObjectReference) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.objs {
		if e.machine == machine && !e.task && !e.gone {
			return
		}
	}
	if e := r.objs[ref]; e != nil {
		e.machine = machine
		return
	}
	r.objs[ref] = &entry{machine: machine, task: true}
	r.poke()
}

// vm follows the machine's VM; props are the values the reconcile just read, so only a later change
// wakes the machine.
func (r *registry) vm(machine k8stypes.NamespacedName, ref types.ManagedObjectReference, props []types.DynamicProperty) {
	if r == nil {
		return
	}
	var st vmState
	for _, p := range props {
		st.set(p.Name, p.Val)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.objs[ref]; e != nil {
		// One that was forgotten (settled) and is still in the view is followed again.
		e.machine, e.state, e.gone = machine, st, false
		return
	}
	r.objs[ref] = &entry{machine: machine, state: st}
	r.poke()
}

// forget stops following the machine's VMs (it has none any more, or they are settled).
func (r *registry) forget(machine k8stypes.NamespacedName) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for ref, e := range r.objs {
		if e.machine == machine && !e.task {
			e.gone = true
			if !e.inView {
				delete(r.objs, ref)
			}
		}
	}
}

// restart begins a new loop: nothing is in its view yet. It returns the loop's number.
func (r *registry) restart() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	r.healthy = false
	for ref, e := range r.objs {
		e.inView = false
		if e.gone {
			delete(r.objs, ref)
		}
	}
	r.poke()
	return r.gen
}

// pending returns the view changes loop gen should send (ok is false once it was replaced) and
// marks them sent. Objects that are done leave the view along with new ones (a finished task or
// a destroyed VM in the view costs nothing), or on their own when prune is set: so a quiet
// manager's view and registry empty out.
func (r *registry) pending(gen int, prune bool) (add, remove []types.ManagedObjectReference, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != r.gen {
		return nil, nil, false
	}
	for ref, e := range r.objs {
		if !e.inView && !e.gone {
			add = append(add, ref)
			e.inView = true
		}
	}
	if len(add) == 0 && !prune {
		return nil, nil, true
	}
	for ref, e := range r.objs {
		if e.gone && e.inView {
			remove = append(remove, ref)
			delete(r.objs, ref)
		}
	}
	return add, remove, true
}

// unsent puts view changes that failed back (the next loop sends them again).
func (r *registry) unsent(gen int, add []types.ManagedObjectReference) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != r.gen {
		return
	}
	for _, ref := range add {
		if e := r.objs[ref]; e != nil {
			e.inView = false
		}
	}
}

// missing drops objects vCenter does not know (a task it forgot, a VM deleted meanwhile) and
// returns their machines, which must look for themselves.
func (r *registry) missing(refs []types.ManagedObjectReference) []k8stypes.NamespacedName {
	r.mu.Lock()
	defer r.mu.Unlock()
	var machines []k8stypes.NamespacedName
	for _, ref := range refs {
		if e := r.objs[ref]; e != nil {
			machines = append(machines, e.machine)
			delete(r.objs, ref)
		}
	}
	return machines
}

// apply takes one update of loop gen and returns the machine to wake, if any: a task that ended,
// a VM whose watched values changed or that was deleted.
func (r *registry) apply(gen int, u types.ObjectUpdate) (k8stypes.NamespacedName, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.objs[u.Obj]
	if gen != r.gen || e == nil || e.gone {
		return k8stypes.NamespacedName{}, false
	}
	if u.Kind == types.ObjectUpdateKindLeave {
		delete(r.objs, u.Obj)
		return e.machine, true
	}
	if e.task {
		for _, c := range u.ChangeSet {
			if s, ok := c.Val.(types.TaskInfoState); ok && (s == types.TaskInfoStateSuccess || s == types.TaskInfoStateError) {
				e.gone = true
				return e.machine, true
			}
		}
		return k8stypes.NamespacedName{}, false
	}
	st := e.state
	if u.Kind == types.ObjectUpdateKindEnter {
		st = vmState{} // every watched value comes with it
	}
	for _, c := range u.ChangeSet {
		st.set(c.Name, c.Val)
	}
	if st == e.state {
		return k8stypes.NamespacedName{}, false
	}
	e.state = st
	return e.machine, true
}

// machines lists every machine followed.
func (r *registry) machines() []k8stypes.NamespacedName {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[k8stypes.NamespacedName]bool{}
	var out []k8stypes.NamespacedName
	for _, e := range r.objs {
		if !seen[e.machine] {
			seen[e.machine] = true
			out = append(out, e.machine)
		}
	}
	return out
}

// setHealthy records whether loop gen is waiting for updates.
func (r *registry) setHealthy(gen int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen == r.gen {
		r.healthy = ok
	}
}

// watching reports whether changes of this session's objects are being followed.
func (r *registry) watching() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.healthy
}
