package chaos

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/capwin/capwin/test/framework/harness"
)

// simRestarts restarts the hypervisor's endpoint during the rollout (the second half of the
// fault window): vCenter's service (vcsim: the address away for Outage, then every session and
// ended task forgotten, the inventory kept), or one Hyper-V host's WinRM service after the
// other (open shells and their commands lost, the host's VMs and jobs kept).
type simRestarts struct {
	s     *soak
	done  atomic.Int64
	ended chan struct{}
}

// startSimRestarts spreads c.SimRestarts restarts over the second half of the window that began.
func (s *soak) startSimRestarts(ctx context.Context, begin time.Time) *simRestarts {
	r := &simRestarts{s: s, ended: make(chan struct{})}
	go func() {
		defer close(r.ended)
		n := s.c.SimRestarts
		half := s.c.Duration / 2
		for i := range n {
			at := begin.Add(half + half*time.Duration(i+1)/time.Duration(n+1))
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(at)):
			}
			if err := r.restart(context.WithoutCancel(ctx), i); err != nil {
				s.p("  restart failed: %v", err)
				return
			}
			r.done.Add(1)
		}
	}()
	return r
}

func (r *simRestarts) restart(ctx context.Context, i int) error {
	s := r.s
	outage := s.c.Outage
	if outage == 0 {
		outage = 3 * time.Second
	}
	if s.c.Provider == harness.VCenter {
		s.p("  restarting vCenter's service (away for %s)", outage)
		return s.h.VSphere.Restart(ctx, outage)
	}
	host := s.h.HyperV[i%len(s.h.HyperV)]
	s.p("  restarting the WinRM service of %s (away for %s)", host.Name, outage)
	return host.Server.Restart(ctx, outage)
}

// wait waits for the restarts to end and returns how many were made, under the report's name.
func (r *simRestarts) wait() (string, int64) {
	<-r.ended
	if r.s.c.Provider == harness.VCenter {
		return "vCenter service restarts", r.done.Load()
	}
	return "Hyper-V WinRM service restarts", r.done.Load()
}
