package hypervsim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// TestHungHostReturnsAtDeadline: operations on a host whose PowerShell hangs, and those waiting for
// that host's NTLM turn, return at their deadline as an unreachable host instead of waiting for it.
func TestHungHostReturnsAtDeadline(t *testing.T) {
	h := NewHost("hv1", 65536, []string{"external"}, map[string]int64{parent: 30 << 30})
	srv, err := h.Serve(map[string]string{"capwin": "Host-pw1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	conns := &hyperv.Conns{Timeout: 10 * time.Second, Deadlines: hyperv.Deadlines{Short: 500 * time.Millisecond}}
	conn, err := conns.Get("test/c/hv1", hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1", CABundle: srv.CACertPEM()})
	if err != nil {
		t.Fatal(err)
	}
	h.Hang(true)
	t.Cleanup(func() { h.Hang(false) })
	start := time.Now()
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var found wire.Found
			errs[i] = conn.Run(context.Background(), wire.OpFind, wire.VMKey{Placement: folders, UID: "u1"}, &found)
		}()
	}
	wg.Wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("operations took %s with a 500ms deadline", took)
	}
	for i, err := range errs {
		if hyperv.KindOf(err) != wire.KindUnreachable || !strings.Contains(err.Error(), "no answer within 500ms") {
			t.Errorf("operation %d: %v", i, err)
		}
	}
}
