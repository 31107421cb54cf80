package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/capwin/capwin/test/bench/benchutil"
)

type phase struct {
	name  string
	wall  time.Duration
	calls map[string]int
	dials int64
}

type report struct {
	machines, concurrency int
	guestPoll, taskPoll   time.Duration
	phases                []phase
}

func (r *report) add(name string, wall time.Duration, before, after map[string]int, dials int64) {
	delta := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			delta[k] = d
		}
	}
	r.phases = append(r.phases, phase{name: name, wall: wall, calls: delta, dials: dials})
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "VCenterMachines on vcsim (VPX, separate process) through setup.Reconcilers and kube-apiserver %s\n", "v1.36.3")
	fmt.Fprintf(w, "machines=%d  vcentermachine-concurrency=%d  guest-poll-interval=%s  task-poll-interval=%s  GOMAXPROCS=%d\n\n",
		r.machines, r.concurrency, r.guestPoll, r.taskPoll, runtime.GOMAXPROCS(0))
	fmt.Fprintln(w, "| phase | wall time | vSphere calls / VM | TLS connections opened |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, p := range r.phases {
		fmt.Fprintf(w, "| %s | %s | %.1f | %d |\n", p.name, p.wall.Round(10*time.Millisecond), float64(benchutil.Sum(p.calls))/float64(r.machines), p.dials)
	}
	for _, p := range r.phases {
		fmt.Fprintf(w, "\n%s, calls per VM by method:\n\n| method | calls / VM |\n|---|---|\n", p.name)
		for _, m := range benchutil.ByValue(p.calls) {
			fmt.Fprintf(w, "| %s | %.2f |\n", m, float64(p.calls[m])/float64(r.machines))
		}
	}
	rss, peak := benchutil.Memory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "\ncontroller process: RSS %s, peak RSS %s, Go heap in use %.1f MiB\n", rss, peak, float64(ms.HeapInuse)/(1<<20))
}
