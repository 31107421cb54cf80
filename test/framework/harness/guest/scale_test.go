package guest_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// testManyGuests joins GUEST_SCALE guests (default 100) with one token, reports the goroutines
// and heap they hold while idle, and checks that Stop leaves none of their goroutines behind.
func (f *fixture) testManyGuests(t *testing.T) {
	count := 100
	if v, err := strconv.Atoi(os.Getenv("GUEST_SCALE")); err == nil {
		count = v
	}
	token := createToken(t, f.cs, 15*time.Minute)
	goroutines, heap := usage()
	begin := time.Now()
	guests := make([]*guest.Guest, count)
	for i := range guests {
		n := node{format: userdata.FormatCloudConfig, name: fmt.Sprintf("win-s%03d", i), token: token, gzipped: true,
			endpoint: f.c.Endpoint, caHash: f.caHash}
		guests[i] = guest.Boot(t.Context(), guest.Config{
			UserData: render(t, n), Build: osversion.LTSC2022, Address: nextAddress(),
			HeartbeatInterval: 10 * time.Second, JoinTimeout: 2 * time.Minute, Log: logr.Discard(),
		})
	}
	stopAll := func() {
		for _, g := range guests {
			g.Stop()
		}
	}
	t.Cleanup(stopAll)
	for _, g := range guests {
		waitDone(t, g, 3*time.Minute)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", g.NodeName(), err)
		}
	}
	joined := time.Since(begin)
	time.Sleep(time.Second) // informers settle
	g1, h1 := usage()
	t.Logf("%d guests joined in %v; idle they hold %d goroutines (%.1f each) and %.1f MiB heap (%.0f KiB each)",
		count, joined.Round(time.Millisecond), g1-goroutines, float64(g1-goroutines)/float64(count),
		float64(h1-heap)/(1<<20), float64(h1-heap)/1024/float64(count))

	stopAll()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g2, _ := usage()
		if g2 <= goroutines+5 {
			break
		}
		if time.Now().After(deadline) {
			var buf strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("%d goroutines after Stop, %d before the guests booted:\n%s", g2, goroutines, buf.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func usage() (goroutines int, heap int64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), int64(m.HeapAlloc) //nolint:gosec // G115: a heap size in bytes, far below 2^63
}
