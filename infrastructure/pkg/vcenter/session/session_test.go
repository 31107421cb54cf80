package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"

	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/internal/test/leakcheck"
)

// TestSessionChurn creates and deletes clusters (and changes a Secret) many times against vcsim:
// sessions no cluster uses are logged out and their connections closed, so goroutines and heap
// come back to where they started.
func TestSessionChurn(t *testing.T) {
	cycles := 1000
	if testing.Short() {
		cycles = 100
	}
	server := startVcsim(t)

	sessions := &Sessions{Gate: &logingate.Gate{}}
	t.Cleanup(func() { sessions.Close(context.Background()) })
	ctx := context.Background()
	cred := func(password string) Credentials {
		return Credentials{Server: server, Username: "capwin", Password: password, Insecure: true,
			Secret: logingate.Key{Namespace: "ns", Name: "id", ResourceVersion: password}}
	}
	use := func(holder string, c Credentials) {
		t.Helper()
		sess, err := sessions.Get(ctx, holder, c, VMWatch{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := methods.GetCurrentTime(ctx, sess.Client); err != nil {
			t.Fatal(err)
		}
	}
	cycle := func(i int) {
		// A cluster comes and goes; another keeps its session while its Secret changes.
		use(fmt.Sprintf("ns/c%d", i), cred("pw"))
		sessions.Release(fmt.Sprintf("ns/c%d", i))
		use("ns/stay", cred(fmt.Sprintf("pw-%d", i)))
	}
	cycle(-1)
	goroutines, heap := leakcheck.Settle()
	for i := range cycles {
		cycle(i)
	}
	if n := sessions.count(); n != 1 {
		t.Fatalf("%d sessions cached after the churn, want 1 (the cluster that stayed)", n)
	}
	afterGoroutines, afterHeap := leakcheck.Settle()
	t.Logf("%d cycles: goroutines %d -> %d, heap %d KiB -> %d KiB", cycles, goroutines, afterGoroutines, heap>>10, afterHeap>>10)
	if afterGoroutines > goroutines+5 {
		t.Errorf("goroutines grew from %d to %d over %d cycles", goroutines, afterGoroutines, cycles)
	}
	if afterHeap > heap+8<<20 {
		t.Errorf("heap grew from %d KiB to %d KiB over %d cycles", heap>>10, afterHeap>>10, cycles)
	}
	sessions.Release("ns/stay")
	if n := sessions.count(); n != 0 {
		t.Fatalf("%d sessions cached after every cluster is gone", n)
	}
}
