package benchutil

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Counts parses "100,250,500" into machine counts.
func Counts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("machine count %q: want a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Sweep runs this command once per machine count, each in a fresh process (vcsim or hosts and
// API server included) with the flags given on the command line except skip, plus -machines N
// -result FILE. The child's tables go to w; then a table over all counts and, with plotDir,
// the plots.
func Sweep(counts []int, plotDir string, w io.Writer, skip ...string) ([]Run, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-sweep-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var args []string
	skip = append(skip, "machines", "result")
	flag.Visit(func(f *flag.Flag) {
		for _, s := range skip {
			if f.Name == s {
				return
			}
		}
		args = append(args, "-"+f.Name+"="+f.Value.String())
	})
	var runs []Run
	for _, n := range counts {
		result := filepath.Join(dir, strconv.Itoa(n)+".json")
		cmd := exec.Command(self, append(args, "-machines="+strconv.Itoa(n), "-result="+result)...)
		cmd.Stdout, cmd.Stderr = w, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Run(); err != nil {
			return runs, fmt.Errorf("%d machines: %w", n, err)
		}
		b, err := os.ReadFile(result)
		if err != nil {
			return runs, err
		}
		var r Run
		if err := json.Unmarshal(b, &r); err != nil {
			return runs, err
		}
		runs = append(runs, r)
	}
	if err := PrintSweep(w, runs); err != nil {
		return runs, err
	}
	if plotDir != "" {
		return runs, WritePlots(plotDir, runs)
	}
	return runs, nil
}

// PrintSweep writes one row per run and phase.
func PrintSweep(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	b := new(strings.Builder)
	r0 := runs[0]
	fmt.Fprintf(b, "\n%s, %s, %d machine workers, each count in a fresh process:\n\n", r0.Bench, r0.Mode, r0.Workers)
	fmt.Fprintf(b, "| machines | phase | wall time | reconciles / VM | %s / VM | ... to provision | %s / VM | CPU ms / VM | peak RSS | peak Go heap | goroutines idle → after |\n", r0.Unit, r0.RequestUnit)
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		for _, p := range r.Phases {
			fmt.Fprintf(b, "| %d | %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %d → %d |\n", r.Machines, p.Name, secs(p.Wall), r.perVM(p.Reconciles),
				r.perVM(Sum(p.Calls)), r.perVM(p.ToProvision()), r.perVM(Sum(p.Requests)), ms(p.CPU/time.Duration(r.Machines)),
				MiB(p.PeakRSS), MiB(p.PeakHeap), r.IdleGoroutines, r.AfterGoroutines)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
