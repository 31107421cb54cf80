package session

import (
	"context"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// defaultWatchWait is the longest one WaitForUpdatesEx waits on vCenter before it returns empty;
// the loop then notices a session that ended even when nothing changes.
const defaultWatchWait = 5 * time.Minute

// watchGather is how long the watch gathers new objects before it adds them to its view.
const watchGather = 200 * time.Millisecond

// watchPrune is how long the view keeps objects that are done when nothing new comes.
const watchPrune = time.Minute

// watch starts the property-collector loop of a session about to be cached, when the sessions
// report changes (Wake is set). The loop follows the objects of the session key's registry (vms
// of each VM) and stops with the session (logout, invalidate).
func (s *Sessions) watch(sess *Session, vms VMWatch) {
	if s.Wake == nil {
		return
	}
	if s.watches == nil {
		s.watches = map[string]*registry{}
	}
	reg := s.watches[sess.key]
	if reg == nil {
		reg = newRegistry(vms)
		s.watches[sess.key] = reg
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stop := sess.stop
	sess.stop = func() { cancel(); stop() }
	// A logout first ends the loop, which destroys its collector: that ends the wait in flight on
	// vCenter instead of leaving it open until its MaxWaitSeconds.
	sess.unwatch = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(watchStopWait):
		}
	}
	sess.watch = reg
	l := &loop{sess: sess, reg: reg, wake: s.Wake, wait: s.WatchWait}
	if l.wait <= 0 {
		l.wait = defaultWatchWait
	}
	go func() { defer close(done); l.run(ctx) }()
}

// watchStopWait bounds how long a logout waits for its watch loop to destroy its collector.
const watchStopWait = 5 * time.Second

// loop is one session's property collector over a ListView of the tasks and VMs capwin follows.
type loop struct {
	sess *Session
	reg  *registry
	wake func(k8stypes.NamespacedName)
	wait time.Duration
}

// run keeps a collector going until the session stops. When vCenter ended the session, the
// session is dropped and every machine followed is woken: their reconciles log in again (through
// the login gate) and the new session's loop takes the registry over. Other failures start a new
// collector on the same session after a pause.
func (l *loop) run(ctx context.Context) {
	pause := time.Second
	for {
		err := l.once(ctx)
		if ctx.Err() != nil {
			return
		}
		if fault.Is(err, &types.NotAuthenticated{}) {
			l.sess.pool.invalidate(l.sess)
			for _, o := range l.reg.machines() {
				l.wake(o)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Minute)
	}
}

// once creates a collector, a ListView and a filter, then feeds the view and waits for updates
// until either fails.
func (l *loop) once(parent context.Context) (err error) {
	c := l.sess.Client
	pc, err := property.DefaultCollector(c).Create(parent)
	if err != nil {
		return err
	}
	var lv types.ManagedObjectReference
	defer func() {
		// Best effort: on the session the next collector is created on, or before a logout (the
		// collector's wait in flight ends with it). A session vCenter ended took them with it.
		if fault.Is(err, &types.NotAuthenticated{}) {
			return
		}
		dctx, done := context.WithTimeout(context.Background(), watchStopWait)
		defer done()
		if lv.Value != "" {
			_, _ = methods.DestroyView(dctx, c, &types.DestroyView{This: lv})
		}
		_ = pc.Destroy(dctx)
	}()
	view, err := methods.CreateListView(parent, c, &types.CreateListView{This: *c.ServiceContent.ViewManager})
	if err != nil {
		return err
	}
	lv = view.Returnval
	_, err = pc.CreateFilter(parent, types.CreateFilter{Spec: types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{Obj: lv, Skip: types.NewBool(true),
			SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ListView", Path: "view"}}}},
		PropSet: []types.PropertySpec{{Type: "VirtualMachine", PathSet: l.reg.vms.Paths}, {Type: "Task", PathSet: []string{"info.state"}}},
	}})
	if err != nil {
		return err
	}
	gen := l.reg.restart()
	ctx, cancel := context.WithCancel(parent)
	errs := make(chan error, 2)
	go func() { errs <- l.feed(ctx, gen, lv) }()
	go func() { errs <- l.updates(ctx, gen, pc.Reference()) }()
	err = <-errs
	cancel()
	<-errs //nolint:errcheck // the other half ended because of cancel: its error says only that
	l.reg.setHealthy(gen, false)
	return err
}

// feed adds the objects reconciles registered to the view, in one call per batch: it gathers
// registrations for watchGather after the first (a clone runs for seconds, a VM is added after
// its clone ended: the view is not late for either). Objects that are done leave the view with
// the next batch, or after watchPrune without one.
func (l *loop) feed(ctx context.Context, gen int, lv types.ManagedObjectReference) error {
	for {
		prune := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.reg.signal:
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(watchGather):
			}
		case <-time.After(watchPrune):
			prune = true
		}
		add, remove, ok := l.reg.pending(gen, prune)
		if !ok {
			l.reg.poke() // the signal was the loop's that replaced this one
			return context.Canceled
		}
		if len(add) == 0 && len(remove) == 0 {
			continue
		}
		res, err := methods.ModifyListView(ctx, l.sess.Client, &types.ModifyListView{This: lv, Add: add, Remove: remove})
		if err != nil {
			l.reg.unsent(gen, add)
			return err
		}
		for _, o := range l.reg.missing(res.Returnval) {
			l.wake(o)
		}
	}
}

// updates waits for changes and wakes the machines they concern.
func (l *loop) updates(ctx context.Context, gen int, pc types.ManagedObjectReference) error {
	secs := max(int32(l.wait/time.Second), 1) //nolint:gosec // l.wait is Sessions.WatchWait, minutes, far below 2^31 s
	version := ""
	for {
		wctx, cancel := context.WithTimeout(ctx, l.wait+30*time.Second)
		res, err := methods.WaitForUpdatesEx(wctx, l.sess.Client, &types.WaitForUpdatesEx{
			This: pc, Version: version, Options: &types.WaitOptions{MaxWaitSeconds: &secs},
		})
		cancel()
		if err != nil {
			return err
		}
		l.reg.setHealthy(gen, true)
		set := res.Returnval
		if set == nil {
			continue
		}
		version = set.Version
		for _, fu := range set.FilterSet {
			for _, u := range fu.ObjectSet {
				if o, ok := l.reg.apply(gen, u); ok {
					l.wake(o)
				}
			}
		}
	}
}
