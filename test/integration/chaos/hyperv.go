package chaos

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/capwin/capwin/test/framework/harness"
)

// hypervFaults acts on the simulated Hyper-V hosts while the faults run: answers lost, slow host
// jobs, one host that hangs for a while and one whose disk is full for a while (its creates fail).
type hypervFaults struct {
	rates Rates
	rng   *rand.Rand
	hosts []harness.HyperVHost

	lost, delayed, hangs, diskFull atomic.Int64
}

// ops whose answer the simulated hosts can lose.
var hypervOps = []string{"find", "create", "power", "job", "remove", "eject"}

func newHyperVFaults(r Rates, seed uint64, hosts []harness.HyperVHost) *hypervFaults {
	return &hypervFaults{rates: r, rng: rand.New(rand.NewPCG(seed, 2)), hosts: hosts}
}

// run injects faults every tick until ctx ends, then heals every host.
func (f *hypervFaults) run(ctx context.Context, window time.Duration) {
	const tick = 250 * time.Millisecond
	start := time.Now()
	var hung, full *harness.HyperVHost
	defer func() {
		for _, h := range f.hosts {
			h.Hang(false)
			h.SetFreeDisk(1 << 40)
			h.SetJobDelay(200 * time.Millisecond)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
		elapsed := time.Since(start)
		host := f.hosts[f.rng.IntN(len(f.hosts))]
		// Per tick, a host loses an answer or runs its jobs slowly at the configured rates.
		if f.rng.Float64() < f.rates.Lose*10 {
			host.LoseAnswers(hypervOps[f.rng.IntN(len(hypervOps))], 1)
			f.lost.Add(1)
		}
		if f.rng.Float64() < f.rates.Delay*2 {
			host.SetJobDelay(time.Duration(f.rng.Int64N(int64(f.rates.MaxDelay) + 1)))
			f.delayed.Add(1)
		}
		// One host hangs during the second quarter of the window, another's disk is full in the third.
		switch q := int(4 * elapsed / window); {
		case q == 1 && hung == nil:
			hung = &f.hosts[f.rng.IntN(len(f.hosts))]
			hung.Hang(true)
			f.hangs.Add(1)
		case q == 2 && full == nil:
			if hung != nil {
				hung.Hang(false)
			}
			full = &f.hosts[f.rng.IntN(len(f.hosts))]
			full.SetFreeDisk(0)
			f.diskFull.Add(1)
		case q >= 3 && full != nil:
			full.SetFreeDisk(1 << 40)
		}
	}
}
