package benchutil

import (
	"fmt"
	"io"
	"strings"
	"time"
)

func (r *Run) perVM(n int) float64 { return float64(n) / float64(r.Machines) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// Print writes the run's tables in Markdown.
func (r *Run) Print(w io.Writer) error {
	_, err := io.WriteString(w, r.Markdown())
	return err
}

// Markdown returns the run's tables.
func (r *Run) Markdown() string {
	b := new(strings.Builder)
	fmt.Fprintf(b, "\n%s, %s: %d machines, %d machine workers\n\n", r.Bench, r.Mode, r.Machines, r.Workers)
	fmt.Fprintf(b, "| phase | wall time | reconciles / VM | %s / VM | ... to provision | %s / VM | CPU ms / VM | peak RSS | peak Go heap | heap after |\n", r.Unit, r.RequestUnit)
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range r.Phases {
		fmt.Fprintf(b, "| %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n", p.Name, secs(p.Wall), r.perVM(p.Reconciles),
			r.perVM(Sum(p.Calls)), r.perVM(p.ToProvision()), r.perVM(Sum(p.Requests)), ms(p.CPU/time.Duration(r.Machines)), MiB(p.PeakRSS), MiB(p.PeakHeap), MiB(p.Heap))
	}
	fmt.Fprintf(b, "\n(... to provision: less the reads of machines already provisioned, which poll for their Node while the phase lasts)\n")
	fmt.Fprintf(b, "\nwhere the workers' time went (worker seconds; capacity = workers × wall time):\n\n")
	fmt.Fprintf(b, "| phase | capacity | in reconciles | in %s | in %s | rest of reconciles | workers idle |\n", r.Unit, r.RequestUnit)
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|")
	for _, p := range r.Phases {
		capacity := time.Duration(r.Workers) * p.Wall
		busy, rest, idle := "n/a", "n/a", "n/a"
		if p.Busy > 0 {
			busy, rest, idle = secs(p.Busy), secs(p.Busy-p.CallTime-p.RequestTime), secs(capacity-p.Busy)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", p.Name, secs(capacity), busy, secs(p.CallTime), secs(p.RequestTime), rest, idle)
	}
	r.byKey(b, r.Unit+" per VM by method", func(p Phase) map[string]int { return p.Calls })
	r.byKey(b, "VM reads per VM by the machine's state", func(p Phase) map[string]int { return p.Reads })
	r.byKey(b, r.RequestUnit+" per VM by verb and resource", func(p Phase) map[string]int { return p.Requests })
	quiet := ""
	if r.Quiet > 0 {
		quiet = fmt.Sprintf(" and %s of quiet", r.Quiet)
	}
	fmt.Fprintf(b, "\ngoroutines: %d idle before the first machine, %d after the last one is gone%s; live Go heap: %s idle, %s after\n",
		r.IdleGoroutines, r.AfterGoroutines, quiet, MiB(r.IdleHeap), MiB(r.AfterHeap))
	return b.String()
}

// byKey prints one column per phase of a per-VM count.
func (r *Run) byKey(b *strings.Builder, title string, counts func(Phase) map[string]int) {
	all := map[string]int{}
	head := []string{"", ""}
	for _, p := range r.Phases {
		for k, v := range counts(p) {
			all[k] += v
		}
		head[0] += " " + p.Name + " |"
		head[1] += "---|"
	}
	fmt.Fprintf(b, "\n%s:\n\n| |%s\n|---|%s\n", title, head[0], head[1])
	for _, k := range ByValue(all) {
		var cells strings.Builder
		for _, p := range r.Phases {
			fmt.Fprintf(&cells, " %.2f |", r.perVM(counts(p)[k]))
		}
		fmt.Fprintf(b, "| %s |%s\n", k, cells.String())
	}
}
