package machine

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/capwin/capwin/internal/guestos"
)

// stepTime is one completed bootstrap step.
type stepTime struct {
	Step     string
	Duration time.Duration
}

// stepClock follows one machine's bootstrap through the guest's reports, so that each step
// and the create-to-ready time are observed once however often a machine is reconciled.
type stepClock struct {
	uid   types.UID
	step  string // the step being timed ("" before the first report of a known step)
	since time.Time
	// unknownStart is true while the step being timed was already running when this manager
	// first saw the machine (it restarted): its start is unknown, so it is not timed.
	unknownStart bool
	done         map[string]bool // steps already observed
	// created is when this manager sent the VM create (zero: before its time, e.g. a restart).
	created time.Time
	ready   bool // create-to-ready observed
	// reconciles and deleteReconciles count the machine's reconciles before and after its
	// deletion (reconciles per VM).
	reconciles, deleteReconciles int
	// task is the hypervisor task last started for the machine, and taskAt when, to the
	// nanosecond (status keeps whole seconds): its first reads are timed from it (taskWait).
	task   string
	taskAt time.Time
}

// advance takes one report and returns the step it completed, if any. A later step completes
// the step being timed; a report of an earlier one (the script runs again from preflight after
// a reboot) changes nothing; Succeeded completes the current step. Unknown steps are ignored,
// and so is the first step seen by a manager that did not send the machine's create.
func (c *stepClock) advance(step, state string, now time.Time) (stepTime, bool) {
	idx := guestos.StepIndex(step)
	if idx < 0 {
		return stepTime{}, false
	}
	if c.step == "" {
		c.step, c.since, c.unknownStart = step, now, c.created.IsZero()
		return stepTime{}, false
	}
	cur := guestos.StepIndex(c.step)
	var completed stepTime
	skip := c.unknownStart
	switch {
	case idx > cur:
		completed = stepTime{c.step, now.Sub(c.since)}
		c.step, c.since, c.unknownStart = step, now, false
	case idx == cur && state == guestos.ReportSucceeded:
		completed = stepTime{c.step, now.Sub(c.since)}
	default:
		return stepTime{}, false
	}
	if skip || c.done[completed.Step] {
		return stepTime{}, false
	}
	if c.done == nil {
		c.done = map[string]bool{}
	}
	c.done[completed.Step] = true
	return completed, true
}

// nodeReady returns the create-to-ready time the first time it is called after created was set.
func (c *stepClock) nodeReady(readyAt time.Time) (time.Duration, bool) {
	if c.ready || c.created.IsZero() {
		return 0, false
	}
	c.ready = true
	d := readyAt.Sub(c.created)
	if d <= -time.Second {
		return 0, false // the condition is older than this VM
	}
	// The condition's time has whole seconds: a Node ready within the second of the create
	// reads as up to a second before it.
	return max(d, 0), true
}

// clocks are the step clocks of one controller's machines, keyed by object; an entry lives until
// its object is gone.
type clocks struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*stepClock
}

// with runs f on the clock of an object, a new one when the object (its UID) is new.
func (c *clocks) with(key types.NamespacedName, uid types.UID, f func(*stepClock)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.NamespacedName]*stepClock{}
	}
	sc := c.m[key]
	if sc == nil || sc.uid != uid {
		sc = &stepClock{uid: uid}
		c.m[key] = sc
	}
	f(sc)
}

// forget drops the clock of an object that is gone.
func (c *clocks) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// len is the number of clocks (tests).
func (c *clocks) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
