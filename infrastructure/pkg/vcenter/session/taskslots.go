package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// DefaultMaxTasks is --vcenter-max-tasks' default. vCenter queues what it cannot run at once
// (each host and datastore takes a few provisioning operations at a time), so a higher number
// only makes longer queues in vCenter, shared with everyone else's tasks; a lower one keeps a
// burst of clusters from filling the task list that operators and other tools see.
const DefaultMaxTasks = 20

// sweepEvery is how often, at most, the tasks of a full server are read from vCenter to free the
// slots of tasks whose end no reconcile saw (their object was deleted meanwhile).
const sweepEvery = 30 * time.Second

// Task slot metrics, by vCenter server (host:port).
var (
	tasksRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capwin_vcenter_tasks_running",
		Help: "Tasks the manager runs on a vCenter server by its own count: the --vcenter-max-tasks slots taken.",
	}, []string{"server"})
	taskSlotWaits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capwin_vcenter_task_slot_waits_total",
		Help: "Tasks not started because every --vcenter-max-tasks slot of the server was taken (the machine waits: WaitingForTaskSlot).",
	}, []string{"server"})
)

func init() { metrics.Registry.MustRegister(tasksRunning, taskSlotWaits) }

// taskSlots bounds the tasks this manager runs at once on each vCenter server (host:port),
// across every cluster and identity using it. A slot is taken before a task is started and
// freed when a poll sees the task end (Task), or when the start failed.
type taskSlots struct {
	mu      sync.Mutex
	servers map[string]*serverTasks
}

type serverTasks struct {
	host      string
	starting  int                  // slots taken by starts not answered yet
	running   map[string]time.Time // task reference -> started
	lastSweep time.Time
}

// taken is the number of slots taken; it updates the gauge, so callers call it after a change.
func (s *serverTasks) taken() int {
	n := s.starting + len(s.running)
	tasksRunning.WithLabelValues(s.host).Set(float64(n))
	return n
}

func (t *taskSlots) server(host string) *serverTasks {
	if t.servers == nil {
		t.servers = map[string]*serverTasks{}
	}
	s := t.servers[host]
	if s == nil {
		s = &serverTasks{host: host, running: map[string]time.Time{}}
		t.servers[host] = s
	}
	return s
}

// take takes a slot when fewer than limit tasks run; sweep is true when none is free and the
// server's tasks are due to be read again.
func (t *taskSlots) take(host string, limit int, now time.Time) (ok, sweep bool, inFlight int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.server(host)
	inFlight = s.taken()
	if inFlight < limit {
		s.starting++
		s.taken()
		return true, false, inFlight
	}
	if now.Sub(s.lastSweep) >= sweepEvery && len(s.running) > 0 {
		s.lastSweep = now
		return false, true, inFlight
	}
	return false, false, inFlight
}

// started turns a taken slot into a running task ("": the start failed, the slot is free again).
func (t *taskSlots) started(host, ref string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.server(host)
	s.starting--
	if ref != "" {
		s.running[ref] = now
	}
	s.taken()
}

// ended frees the slot of a task (no-op for a task of no slot: started before a restart).
func (t *taskSlots) ended(host string, refs ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.server(host)
	for _, ref := range refs {
		delete(s.running, ref)
	}
	s.taken()
}

// runningRefs are the tasks holding the server's slots.
func (t *taskSlots) runningRefs(host string) []types.ManagedObjectReference {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []types.ManagedObjectReference
	for ref := range t.server(host).running {
		out = append(out, types.ManagedObjectReference{Type: "Task", Value: ref})
	}
	return out
}

// inFlight is the number of tasks this manager runs on a server (host:port) by its count.
func (s *Sessions) inFlight(host string) int {
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	return s.slots.server(host).taken()
}

// StartTask starts a task of the machine when the server has a free slot (or there is no limit),
// else returns a *hypervisor.Throttled and sends nothing; the session's watch follows the task.
// commit, when set, runs after the slot was taken and before the start (the create intent); its
// error frees the slot.
func (sess *Session) StartTask(ctx context.Context, machine k8stypes.NamespacedName, commit func() error, start func() (*object.Task, error)) (string, error) {
	limit, host := sess.pool.MaxTasks, sess.Host()
	if limit > 0 {
		if err := sess.takeSlot(ctx, host, limit); err != nil {
			return "", err
		}
	}
	ref := ""
	defer func() {
		if limit > 0 {
			sess.pool.slots.started(host, ref, time.Now())
		}
	}()
	if commit != nil {
		if err := commit(); err != nil {
			return "", err
		}
	}
	task, err := start()
	if err != nil {
		return "", err
	}
	ref = task.Reference().Value
	sess.watch.task(machine, task.Reference())
	return ref, nil
}

// EndTask frees the slot of a task that ended, or that vCenter no longer knows (no-op for a task
// of no slot: started before a restart).
func (sess *Session) EndTask(ref string) { sess.pool.slots.ended(sess.Host(), ref) }

// takeSlot takes a slot of the server, reading the states of its tasks first when none is free
// and a sweep is due.
func (sess *Session) takeSlot(ctx context.Context, host string, limit int) error {
	slots := &sess.pool.slots
	ok, sweep, n := slots.take(host, limit, time.Now())
	if !ok && sweep {
		slots.ended(host, sess.endedTasks(ctx, slots.runningRefs(host))...)
		ok, _, n = slots.take(host, limit, time.Now())
	}
	if !ok {
		taskSlotWaits.WithLabelValues(host).Inc()
		return &hypervisor.Throttled{Message: fmt.Sprintf(
			"%d tasks of this manager run on vCenter %s (--vcenter-max-tasks=%d): the next starts when one ends", n, host, limit)}
	}
	return nil
}

// endedTasks reads the states of tasks in one call and returns those that are no longer queued
// or running, or that vCenter no longer knows. On a failed read it returns none.
func (sess *Session) endedTasks(ctx context.Context, tasks []types.ManagedObjectReference) []string {
	req := types.RetrieveProperties{
		This: sess.Client.ServiceContent.PropertyCollector,
		SpecSet: []types.PropertyFilterSpec{{
			PropSet:                       []types.PropertySpec{{Type: "Task", PathSet: []string{"info.state"}}},
			ReportMissingObjectsInResults: types.NewBool(true),
		}},
	}
	for _, t := range tasks {
		req.SpecSet[0].ObjectSet = append(req.SpecSet[0].ObjectSet, types.ObjectSpec{Obj: t})
	}
	res, err := methods.RetrieveProperties(ctx, sess.Client, &req)
	if err != nil || Unreadable(res.Returnval) != nil {
		return nil
	}
	live := map[string]bool{}
	for _, oc := range res.Returnval {
		for _, p := range oc.PropSet {
			if st, ok := p.Val.(types.TaskInfoState); ok && (st == types.TaskInfoStateQueued || st == types.TaskInfoStateRunning) {
				live[oc.Obj.Value] = true
			}
		}
	}
	var out []string
	for _, t := range tasks {
		if !live[t.Value] {
			out = append(out, t.Value)
		}
	}
	return out
}
