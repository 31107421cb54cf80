package session

import (
	"slices"
	"sync"

	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// VMWatch is what the watch follows of a VM: the properties whose change can move its machine on
// (Paths), and each one's value as the watch compares it (Value; "" is the same as unset). The
// lifecycle reads them all in its one VM read, and a destroyed VM leaves the view: so the tasks
// on a followed VM need not be followed themselves.
type VMWatch struct {
	Paths []string
	Value func(path string, val any) string
}

// vmState is what the watch compares of a VM, by the position of each path in VMWatch.Paths:
// a change wakes its machine.
type vmState []string

// set takes one property value (from a read or from an update) into st.
func (w *VMWatch) set(st vmState, name string, val any) {
	if i := slices.Index(w.Paths, name); i >= 0 {
		st[i] = w.Value(name, val)
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
	vms    VMWatch
	mu     sync.Mutex
	objs   map[types.ManagedObjectReference]*entry
	signal chan struct{}
	// gen is the current loop's number; a loop that was replaced leaves the registry alone.
	gen     int
	healthy bool
}

func newRegistry(vms VMWatch) *registry {
	return &registry{vms: vms, objs: map[types.ManagedObjectReference]*entry{}, signal: make(chan struct{}, 1)}
}

func (r *registry) poke() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// task follows a task capwin started for a machine until it ends, unless its VM is followed:
// what its tasks do shows on the VM (VMWatch), and a task that fails is seen at the
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
	st := make(vmState, len(r.vms.Paths))
	for _, p := range props {
		r.vms.set(st, p.Name, p.Val)
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
	st := slices.Clone(e.state)
	if u.Kind == types.ObjectUpdateKindEnter || st == nil {
		st = make(vmState, len(r.vms.Paths)) // every watched value comes with it
	}
	for _, c := range u.ChangeSet {
		r.vms.set(st, c.Name, c.Val)
	}
	if slices.Equal(st, e.state) {
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

// FollowVM has the session's watch follow the machine's VM (a no-op without a watch); props are
// the values the reconcile just read, so only a later change wakes the machine.
func (sess *Session) FollowVM(machine k8stypes.NamespacedName, ref types.ManagedObjectReference, props []types.DynamicProperty) {
	sess.watch.vm(machine, ref, props)
}

// FollowTask has the session's watch follow a task of the machine until it ends, unless it
// follows the machine's VM already (a no-op without a watch).
func (sess *Session) FollowTask(machine k8stypes.NamespacedName, ref types.ManagedObjectReference) {
	sess.watch.task(machine, ref)
}

// Unfollow stops following the machine's VMs (it has none any more, or they are settled).
func (sess *Session) Unfollow(machine k8stypes.NamespacedName) { sess.watch.forget(machine) }

// Watched reports whether changes of this session's objects are being followed.
func (sess *Session) Watched() bool { return sess.watch.watching() }
