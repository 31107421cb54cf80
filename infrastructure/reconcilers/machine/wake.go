package machine

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

var (
	watchWakeups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capwin_vcenter_watch_wakeups_total",
		Help: "Reconciles a hypervisor watch woke (a task of the machine ended, or its VM's power, addresses, tools or bootstrap report changed), " +
			"by whether the reconcile changed the machine's status (changed) or not (nothing).",
	}, []string{"result"})
	reconcilesPerVM = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "capwin_machine_reconciles_per_vm",
		Help: "Reconciles of one machine from its first reconcile by this manager to provisioned (phase create, machines whose create this manager sent) " +
			"and from its deletion to the removal of its finalizer (phase delete).",
		Buckets: []float64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144},
	}, []string{"kind", "phase"})
)

func init() { metrics.Registry.MustRegister(watchWakeups, reconcilesPerVM) }

// Wakes carries a hypervisor watch's news, "this machine's VM or task changed", into the
// reconciler's queue. Wake never blocks: it adds to the controller's work queue, which merges a
// machine woken twice before its reconcile.
type Wakes struct {
	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	// woken are the machines woken and not reconciled since.
	woken map[types.NamespacedName]bool
	// changed and nothing count the woken reconciles by result (tests, benchmarks).
	changed, nothing int
}

// Wake queues the machine's reconcile.
func (w *Wakes) Wake(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.woken == nil {
		w.woken = map[types.NamespacedName]bool{}
	}
	w.woken[key] = true
	if w.queue != nil {
		w.queue.Add(reconcile.Request{NamespacedName: key})
	}
}

// Counts returns how many woken reconciles changed the machine's status and how many found
// nothing to do.
func (w *Wakes) Counts() (changed, nothing int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed, w.nothing
}

// source hands the controller's queue to the wakes.
func (w *Wakes) source() source.TypedSource[reconcile.Request] {
	return source.TypedFunc[reconcile.Request](func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.Feed(q)
		return nil
	})
}

// Feed makes q the queue wake-ups go to (the controller's, or a benchmark's that drives the
// reconciler itself); machines woken before are queued at once.
func (w *Wakes) Feed(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = q
	for key := range w.woken {
		q.Add(reconcile.Request{NamespacedName: key})
	}
}

// take reports whether the machine was woken since its last reconcile, and forgets it.
func (w *Wakes) take(key types.NamespacedName) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	woken := w.woken[key]
	delete(w.woken, key)
	return woken
}

func (w *Wakes) count(changed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	result := "nothing"
	if changed {
		w.changed++
		result = "changed"
	} else {
		w.nothing++
	}
	watchWakeups.WithLabelValues(result).Inc()
}

// tally is called around each full reconcile: it counts the reconcile toward the machine's
// reconciles per VM and, when a wake caused it, whether it changed anything. The returned func
// takes the object as the reconcile leaves it.
func (r *Reconciler) tally(s *hypervisor.Scope) func() {
	obj := s.InfraMachine
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	woken := r.Wakes.take(key)
	before := obj.GetMachineStatus().DeepCopy()
	finalizers := len(obj.GetFinalizers())
	deleting := !obj.GetDeletionTimestamp().IsZero()
	return func() {
		after := obj.GetMachineStatus()
		gone := len(obj.GetFinalizers()) < finalizers
		if woken {
			r.Wakes.count(gone || !equality.Semantic.DeepEqual(before, after))
		}
		provisioned := !ptr.Deref(before.Initialization.Provisioned, false) && ptr.Deref(after.Initialization.Provisioned, false)
		r.clock(s, func(c *stepClock) {
			if deleting {
				c.deleteReconciles++
			} else {
				c.reconciles++
			}
			if provisioned && !c.created.IsZero() {
				reconcilesPerVM.WithLabelValues(r.Kind.Name, "create").Observe(float64(c.reconciles))
			}
			if gone {
				reconcilesPerVM.WithLabelValues(r.Kind.Name, "delete").Observe(float64(c.deleteReconciles))
			}
		})
	}
}

// watched reports whether the backend's hypervisor reports this machine's changes (a wake), so
// its tasks are polled only as a safety net.
func watched(b hypervisor.Backend) bool {
	w := b.Capabilities().Watch
	return w != nil && w.Watched()
}

// guestWatched reports whether the backend's guest watch wakes this machine on its guest's news
// (read after Find, which starts following the VM).
func guestWatched(b hypervisor.Backend, s *hypervisor.Scope) bool {
	w := b.Capabilities().GuestWatch
	return w != nil && w.GuestWatched(s)
}

// settle tells a watching backend that the machine is done: its Node is linked and its user data
// cleared, so its VM need not be followed any more. Until then the watch follows the guest's
// bootstrap reports, which take minutes on Windows.
func settle(b hypervisor.Backend, s *hypervisor.Scope) {
	c := b.Capabilities()
	if c.Watch != nil {
		c.Watch.Settled(s)
	}
	if c.GuestWatch != nil {
		c.GuestWatch.Settled(s)
	}
}

// taskPolls are the first and the longest wait between two reads of a running task, in task
// poll intervals: 1 and 10, or 10 and 60 when the watch reports the task's end (the polls are
// then only a safety net).
func taskPolls(s *hypervisor.Scope) (first, most time.Duration) {
	if s.Watched {
		return 10, 60
	}
	return 1, 10
}
