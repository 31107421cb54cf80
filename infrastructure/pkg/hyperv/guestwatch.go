package hyperv

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// guestWatch follows, on one host connection, the VMs of the machines that wait for their guest
// (addresses, bootstrap reports, the Node): every interval one operation (peek.ps1) reads the
// state, heartbeat, addresses and capwin KVP items of all of them, and a machine whose VM changed
// since it was last read is woken. Its own reads then back off to a safety net (the reconciler's
// guest wait), so a host answers one operation per interval for all its machines in flight
// instead of one per machine and poll. The loop runs while it follows a VM.
type guestWatch struct {
	conn  *Conn
	every time.Duration
	wake  func(k8stypes.NamespacedName)

	mu      sync.Mutex
	vms     map[string]*followed // by VM id
	running bool
	lastOK  time.Time
	failing bool
	closed  bool
	stop    chan struct{}
}

// followed is one VM of the watch: its machine and what was last seen of it.
type followed struct {
	machine k8stypes.NamespacedName
	seen    string
}

// Follow makes the host's guest watch follow the machine's VM from v, what the machine's
// reconcile just read of it, so only later changes wake the machine (nothing when it is off).
func (c *Conn) Follow(machine k8stypes.NamespacedName, v *wire.View) {
	if c.watch != nil {
		c.watch.follow(machine, v)
	}
}

// Forget stops following the machine's VM.
func (c *Conn) Forget(machine k8stypes.NamespacedName) {
	if c.watch != nil {
		c.watch.forget(machine)
	}
}

// GuestWatched reports whether the host's guest watch follows the machine's VM and the host
// answered its last peeks: the guest's news then wake the machine.
func (c *Conn) GuestWatched(machine k8stypes.NamespacedName) bool {
	return c.watch != nil && c.watch.watching(machine)
}

func newGuestWatch(conn *Conn, every time.Duration, wake func(k8stypes.NamespacedName)) *guestWatch {
	return &guestWatch{conn: conn, every: every, wake: wake, vms: map[string]*followed{}, stop: make(chan struct{})}
}

// follow makes the watch follow the machine's VM from what the machine's reconcile just read of
// it (v), so only later changes wake it.
func (w *guestWatch) follow(machine k8stypes.NamespacedName, v *wire.View) {
	seen := digest(wire.PeekOf(v))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.vms[v.ID] = &followed{machine: machine, seen: seen}
	if !w.running {
		w.running = true
		go w.loop()
	}
}

// forget stops following the machine's VM.
func (w *guestWatch) forget(machine k8stypes.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, f := range w.vms {
		if f.machine == machine {
			delete(w.vms, id)
		}
	}
}

// watching reports whether the watch follows the machine's VM and its last peeks answered: the
// machine's news then wake it.
func (w *guestWatch) watching(machine k8stypes.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastOK.IsZero() || time.Since(w.lastOK) > 3*w.every {
		return false
	}
	for _, f := range w.vms {
		if f.machine == machine {
			return true
		}
	}
	return false
}

func (w *guestWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
}

func (w *guestWatch) loop() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		ids := w.ids()
		if ids == nil {
			return
		}
		var out wire.Peeked
		if err := w.conn.Run(ctx, wire.OpPeek, wire.PeekInput{IDs: ids}, &out); err != nil {
			w.failed()
			continue
		}
		w.seen(ids, out.VMs)
	}
}

// ids lists the followed VMs; nil (and the loop ends) when there are none.
func (w *guestWatch) ids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.vms) == 0 || w.closed {
		w.running = false
		return nil
	}
	ids := make([]string, 0, len(w.vms))
	for id := range w.vms {
		ids = append(ids, id)
	}
	return ids
}

// failed takes a peek that got no answer (the host is down, or refuses the credentials): the
// first failure in a row wakes every followed machine, so each reads its VM itself, shows the
// host's error and goes on at the unwatched pace until a peek answers again.
func (w *guestWatch) failed() {
	w.mu.Lock()
	var wake []k8stypes.NamespacedName
	if !w.failing {
		w.failing = true
		for _, f := range w.vms {
			wake = append(wake, f.machine)
		}
	}
	w.lastOK = time.Time{}
	w.mu.Unlock()
	for _, m := range wake {
		w.wake(m)
	}
}

// seen takes a peek's answer for ids: each followed VM that changed (or is gone) wakes its machine.
func (w *guestWatch) seen(ids []string, vms []wire.Peek) {
	now := map[string]string{}
	for _, p := range vms {
		now[p.ID] = digest(p)
	}
	var wake []k8stypes.NamespacedName
	w.mu.Lock()
	w.lastOK, w.failing = time.Now(), false
	for _, id := range ids {
		f, ok := w.vms[id]
		if !ok {
			continue // forgotten meanwhile
		}
		d, ok := now[id]
		if !ok {
			// Gone (deleted, or moved to another node of a failover cluster): the machine's
			// reconcile finds out, and follows it again where it is.
			delete(w.vms, id)
			wake = append(wake, f.machine)
			continue
		}
		if d != f.seen {
			f.seen = d
			wake = append(wake, f.machine)
		}
	}
	w.mu.Unlock()
	for _, m := range wake {
		w.wake(m)
	}
}

// digest is what a machine waits on in one string (encoding/json sorts the KVP keys).
func digest(p wire.Peek) string {
	p.ID = ""
	if len(p.IPs) == 0 {
		p.IPs = nil
	}
	if len(p.KVP) == 0 {
		p.KVP = nil
	}
	b, _ := json.Marshal(p)
	return string(b)
}
