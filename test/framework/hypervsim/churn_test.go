package hypervsim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/internal/test/leakcheck"
)

// TestConnectionChurn creates and deletes clusters (and changes a host Secret) many times: the
// connections no cluster's host uses are closed, so goroutines (the simulated host's, too) and
// heap come back to where they started.
func TestConnectionChurn(t *testing.T) {
	cycles := 1000
	if testing.Short() {
		cycles = 100
	}
	h := NewHost("hv1", 65536, []string{"external"}, map[string]int64{parent: 30 << 30})
	h.SkipSyntaxCheck() // connections are under test, not the scripts (the other tests parse them)
	srv, err := h.Serve(map[string]string{"capwin": "Host-pw1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	conns := &hyperv.Conns{Timeout: 10 * time.Second, Deadlines: hyperv.Deadlines{Short: 5 * time.Second}}
	cfg := func(version string) hyperv.HostConfig {
		return hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1",
			CABundle: srv.CACertPEM(), Secret: logingate.Key{Namespace: "ns", Name: "hv", ResourceVersion: version}}
	}
	retries := 0
	use := func(holder string, c hyperv.HostConfig) {
		t.Helper()
		conn, err := conns.Get(holder, c)
		if err != nil {
			t.Fatal(err)
		}
		// A fresh connection's first command can lose its stdin to the simulated host's model of
		// WinRM's stdin race (about one in a thousand here); the controllers retry, so does this.
		for range 3 {
			var found wire.Found
			if err = conn.Run(context.Background(), wire.OpFind, wire.VMKey{Placement: folders, UID: "u1"}, &found); err == nil {
				return
			}
			retries++
		}
		t.Fatal(err)
	}
	cycle := func(i int) {
		use(fmt.Sprintf("ns/c%d/hv1", i), cfg("1"))
		conns.Release(fmt.Sprintf("ns/c%d", i))
		use("ns/stay/hv1", cfg(fmt.Sprint(i))) // its Secret changes every cycle
	}
	cycle(-1)
	goroutines, heap := leakcheck.Settle()
	for i := range cycles {
		cycle(i)
	}
	if n := conns.Len(); n != 1 {
		t.Fatalf("%d connections cached after the churn, want 1 (the cluster that stayed)", n)
	}
	afterGoroutines, afterHeap := leakcheck.Settle()
	t.Logf("%d cycles (%d operations retried): goroutines %d -> %d, heap %d KiB -> %d KiB", cycles, retries, goroutines, afterGoroutines, heap>>10, afterHeap>>10)
	if afterGoroutines > goroutines+5 {
		t.Errorf("goroutines grew from %d to %d over %d cycles", goroutines, afterGoroutines, cycles)
	}
	if afterHeap > heap+8<<20 {
		t.Errorf("heap grew from %d KiB to %d KiB over %d cycles", heap>>10, afterHeap>>10, cycles)
	}
}
