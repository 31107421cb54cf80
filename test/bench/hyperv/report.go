package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/capwin/capwin/test/bench/benchutil"
)

// printReport writes the settings, the run's tables, what is particular to WinRM and where the
// VMs were placed.
func printReport(w io.Writer, c config, r *benchutil.Run, hosts []hostInfo, placement map[string]int) {
	fmt.Fprintf(w, "HyperVMachines on hypervsim hosts (WinRM over HTTPS + NTLM, separate process) through setup.Reconcilers and kube-apiserver %s\n", "v1.36.3")
	fmt.Fprintf(w, "machines=%d  hosts=%d  hypervmachine-concurrency=%d  guest-poll-interval=%s  task-poll-interval=%s  GOMAXPROCS=%d\n",
		c.machines, c.hosts, c.concurrency, c.poll, c.taskPoll, runtime.GOMAXPROCS(0))
	r.Print(w)
	fmt.Fprintln(w, "\n| phase | WinRM round trips / VM | mean operation time |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, p := range r.Phases {
		ops, mean := benchutil.Sum(p.Calls), time.Duration(0)
		if ops > 0 {
			mean = p.CallTime / time.Duration(ops)
		}
		fmt.Fprintf(w, "| %s | %.1f | %s |\n", p.Name, float64(p.Counters["round trips"])/float64(r.Machines), mean.Round(100*time.Microsecond))
	}
	fmt.Fprintf(w, "\nVMs per host after create:\n\n| host | VMs |\n|---|---|\n")
	for _, h := range hosts {
		fmt.Fprintf(w, "| %s | %d |\n", h.Name, placement[h.Name])
	}
	fmt.Fprintln(w)
}
