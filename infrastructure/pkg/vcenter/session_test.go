package vcenter

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/test/leakcheck"
)

// TestSessionChurn creates and deletes clusters (and changes a Secret) many times against vcsim:
// sessions no cluster uses are logged out and their connections closed, so goroutines and heap
// come back to where they started.
func TestSessionChurn(t *testing.T) {
	cycles := 1000
	if testing.Short() {
		cycles = 100
	}
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	model.Service.TLS = new(tls.Config)
	model.Service.Listen = &url.URL{User: url.UserPassword("capwin", "pw")}
	model.Map().SessionManager().ValidLogin = func(*types.Login) bool { return true }
	srv := model.Service.NewServer()
	t.Cleanup(srv.Close)
	server := srv.URL.Scheme + "://" + srv.URL.Host + srv.URL.Path

	sessions := &Sessions{Gate: &logingate.Gate{}}
	t.Cleanup(func() { sessions.Close(context.Background()) })
	ctx := context.Background()
	cred := func(password string) Credentials {
		return Credentials{Server: server, Username: "capwin", Password: password, Insecure: true,
			Secret: logingate.Key{Namespace: "ns", Name: "id", ResourceVersion: password}}
	}
	use := func(holder string, c Credentials) {
		t.Helper()
		sess, err := sessions.Get(ctx, holder, c)
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
	if n := sessions.Len(); n != 1 {
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
	if n := sessions.Len(); n != 0 {
		t.Fatalf("%d sessions cached after every cluster is gone", n)
	}
}
