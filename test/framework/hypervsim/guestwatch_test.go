package hypervsim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// woken records the machines a guest watch woke.
type woken struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *woken) wake(m k8stypes.NamespacedName) { w.mu.Lock(); w.n[m.Name]++; w.mu.Unlock() }

func (w *woken) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.n {
		out[k] = v
	}
	return out
}

// TestGuestWatch: one peek operation per interval reads all the VMs a host connection follows,
// whatever their number; a guest's KVP report or address wakes its machine and no other; a
// forgotten machine is not woken and not watched; a VM that is gone wakes its machine once and
// is let go; with nothing followed the peeks stop; a host that stops answering wakes its
// machines once and leaves them unwatched (their own reads take over).
func TestGuestWatch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	h, srv, _ := simHost(t, false)
	w := &woken{n: map[string]int{}}
	conns := &hyperv.Conns{Timeout: 5 * time.Second, GuestWatch: 100 * time.Millisecond, Wake: w.wake}
	t.Cleanup(func() { conns.Release("ns/c") })
	conn, err := conns.Get("ns/c/hv1", hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1", CABundle: srv.CACertPEM()})
	g.Expect(err).NotTo(HaveOccurred())
	machine := func(i int) k8stypes.NamespacedName {
		return k8stypes.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("m%d", i)}
	}
	var ids []string
	for i := range 5 {
		var v wire.View
		g.Expect(conn.Run(ctx, wire.OpCreate, createInput(fmt.Sprintf("u%d", i), nil), &v)).To(Succeed())
		conn.Follow(machine(i), &v)
		ids = append(ids, v.ID)
	}
	g.Eventually(func() bool { return conn.GuestWatched(machine(0)) }, 5*time.Second, 20*time.Millisecond).Should(BeTrue())
	before := h.Ops()
	time.Sleep(time.Second)
	after := h.Ops()
	peeks := after["peek"] - before["peek"]
	g.Expect(peeks).To(And(BeNumerically(">=", 2), BeNumerically("<=", 11)), "at most one peek per interval (100ms) for the five VMs")
	g.Expect(after["find"]).To(Equal(before["find"]))
	g.Expect(w.counts()).To(BeEmpty(), "nothing changed since each machine's own read")

	// The guest of m2 reports a bootstrap step, then an address: m2 is woken, and no other.
	g.Expect(h.Guest(ids[2], func(vm *VM) { vm.KVP["capwin.bootstrap.status"] = `{"step":"join","state":"Running"}` })).To(Succeed())
	g.Eventually(w.counts, 2*time.Second, 20*time.Millisecond).Should(Equal(map[string]int{"m2": 1}))
	g.Expect(h.Guest(ids[2], func(vm *VM) { vm.NICs[0].IPs = []string{"10.4.0.12"} })).To(Succeed())
	g.Eventually(w.counts, 2*time.Second, 20*time.Millisecond).Should(Equal(map[string]int{"m2": 2}))

	// A forgotten machine is neither watched nor woken.
	conn.Forget(machine(3))
	g.Expect(conn.GuestWatched(machine(3))).To(BeFalse())
	g.Expect(h.Guest(ids[3], func(vm *VM) { vm.Heartbeat = true })).To(Succeed())
	time.Sleep(500 * time.Millisecond)
	g.Expect(w.counts()).To(Equal(map[string]int{"m2": 2}))

	// A VM that is gone wakes its machine once and is no longer followed.
	g.Expect(conn.Run(ctx, wire.OpRemove, wire.VMKey{Placement: folders, ID: ids[4], UID: "u4"}, nil)).To(Succeed())
	g.Eventually(w.counts, 2*time.Second, 20*time.Millisecond).Should(Equal(map[string]int{"m2": 2, "m4": 1}))
	g.Expect(conn.GuestWatched(machine(4))).To(BeFalse())
	time.Sleep(300 * time.Millisecond)
	g.Expect(w.counts()).To(Equal(map[string]int{"m2": 2, "m4": 1}))

	// Nothing followed: the loop ends; following again starts it.
	for i := range 4 {
		conn.Forget(machine(i))
	}
	time.Sleep(300 * time.Millisecond)
	n := h.Ops()["peek"]
	time.Sleep(500 * time.Millisecond)
	g.Expect(h.Ops()["peek"]).To(Equal(n), "no peek without a followed VM")
	var v wire.View
	g.Expect(conn.Run(ctx, wire.OpCreate, createInput("u0", nil), &v)).To(Succeed())
	conn.Follow(machine(0), &v)
	g.Eventually(func() bool { return conn.GuestWatched(machine(0)) }, 5*time.Second, 20*time.Millisecond).Should(BeTrue())
	g.Expect(h.Ops()["peek"]).To(BeNumerically(">", n))

	// A host that stops answering: its machines are woken once, to read their VMs themselves
	// (and show the host's error), and are not watched any more.
	woke := w.counts()["m0"]
	srv.Close()
	g.Eventually(func() bool { return conn.GuestWatched(machine(0)) }, 5*time.Second, 50*time.Millisecond).Should(BeFalse())
	g.Eventually(func() int { return w.counts()["m0"] }, 5*time.Second, 50*time.Millisecond).Should(Equal(woke + 1))
	time.Sleep(500 * time.Millisecond)
	g.Expect(w.counts()["m0"]).To(Equal(woke+1), "once, not at every failed peek")
}
