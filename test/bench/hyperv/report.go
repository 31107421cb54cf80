package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/test/bench/benchutil"
)

// counts is a snapshot of hyperv.Counters.
type counts struct{ ops, trips, nanos int64 }

func snapshot(c *hyperv.Counters) counts {
	return counts{ops: c.Operations.Load(), trips: c.RoundTrips.Load(), nanos: c.Nanos.Load()}
}

type phase struct {
	name string
	wall time.Duration
	d    counts
}

type report struct {
	machines, hosts, concurrency int
	poll, taskPoll               time.Duration
	phases                       []phase
	hostNames                    []string
	placement                    map[string]int
}

func (r *report) add(name string, wall time.Duration, before, after counts) {
	d := counts{ops: after.ops - before.ops, trips: after.trips - before.trips, nanos: after.nanos - before.nanos}
	r.phases = append(r.phases, phase{name: name, wall: wall, d: d})
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "HyperVMachines on hypervsim hosts (WinRM over HTTPS + NTLM, separate process) through setup.Reconcilers and kube-apiserver %s\n", "v1.36.3")
	fmt.Fprintf(w, "machines=%d  hosts=%d  hypervmachine-concurrency=%d  guest-poll-interval=%s  task-poll-interval=%s  GOMAXPROCS=%d\n\n",
		r.machines, r.hosts, r.concurrency, r.poll, r.taskPoll, runtime.GOMAXPROCS(0))
	fmt.Fprintln(w, "| phase | wall time | WinRM operations / VM | WinRM round trips / VM | mean operation time |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, p := range r.phases {
		mean := time.Duration(0)
		if p.d.ops > 0 {
			mean = time.Duration(p.d.nanos / p.d.ops)
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %.1f | %s |\n", p.name, p.wall.Round(10*time.Millisecond),
			float64(p.d.ops)/float64(r.machines), float64(p.d.trips)/float64(r.machines), mean.Round(100*time.Microsecond))
	}
	fmt.Fprintf(w, "\nVMs per host after create:\n\n| host | VMs |\n|---|---|\n")
	for _, h := range r.hostNames {
		fmt.Fprintf(w, "| %s | %d |\n", h, r.placement[h])
	}
	rss, peak := benchutil.Memory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "\ncontroller process: RSS %s, peak RSS %s, Go heap in use %.1f MiB\n", rss, peak, float64(ms.HeapInuse)/(1<<20))
}
