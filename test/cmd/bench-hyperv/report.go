package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/capwin/capwin/test/framework/benchutil"
)

// printReport writes the settings, the run's tables, what is particular to WinRM and where the
// VMs were placed.
func printReport(w io.Writer, c config, r *benchutil.Run, hosts []hostInfo, placement map[string]int) error {
	b := new(strings.Builder)
	fmt.Fprintf(b, "HyperVMachines on hypervsim hosts (WinRM over HTTPS + NTLM, separate process) through setup.Reconcilers and kube-apiserver %s\n", "v1.36.3")
	fmt.Fprintf(b, "machines=%d  hosts=%d  hypervmachine-concurrency=%d  guest-poll-interval=%s  task-poll-interval=%s  GOMAXPROCS=%d\n",
		c.machines, c.hosts, c.concurrency, c.poll, c.taskPoll, runtime.GOMAXPROCS(0))
	b.WriteString(r.Markdown())
	fmt.Fprintln(b, "\n| phase | WinRM round trips / VM | mean operation time |")
	fmt.Fprintln(b, "|---|---|---|")
	for _, p := range r.Phases {
		ops, mean := benchutil.Sum(p.Calls), time.Duration(0)
		if ops > 0 {
			mean = p.CallTime / time.Duration(ops)
		}
		fmt.Fprintf(b, "| %s | %.1f | %s |\n", p.Name, float64(p.Counters["round trips"])/float64(r.Machines), mean.Round(100*time.Microsecond))
	}
	fmt.Fprintf(b, "\nVMs per host after create:\n\n| host | VMs |\n|---|---|\n")
	for _, h := range hosts {
		fmt.Fprintf(b, "| %s | %d |\n", h.Name, placement[h.Name])
	}
	fmt.Fprintln(b)
	_, err := io.WriteString(w, b.String())
	return err
}
