// Command bench-vcenter measures the VCenterMachine lifecycle on govmomi's vcsim through the real
// machine controller: N machines from create to provisioned and from delete to gone. With
// -client apiserver (the default) the controllers run as main.go wires them (setup.Reconcilers)
// against a real kube-apiserver; with -client fake the VCenterMachine reconciler runs on
// controller-runtime's fake client with a workqueue and workers, and no API server. It prints
// wall time, reconciles, vSphere calls and API requests per VM, where the workers' time went,
// TLS connections, CPU, memory and goroutines; -sweep runs several counts, each in a fresh
// process, and -plot-dir writes PNG plots of them.
//
//	go -C test run ./cmd/bench-vcenter -machines 100
//	go -C test run ./cmd/bench-vcenter -client fake -machines 100
//	go -C test run ./cmd/bench-vcenter -sweep 100,250,500,1000 -plot-dir ../docs/img
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/capwin/capwin/test/framework/benchutil"
)

type config struct {
	client                 string
	machines, concurrency  int
	guestPoll, taskPoll    time.Duration
	reconcileInterval      time.Duration
	timeout                time.Duration
	quiet                  time.Duration
	sweep, plotDir         string
	result                 string
	cpuProfile, memProfile string
	watch                  bool
	serveVCSim             bool
	verbose                bool
}

func main() {
	var c config
	flag.StringVar(&c.client, "client", "apiserver", "how the controller meets its API: apiserver (kube-apiserver + etcd, setup.Reconcilers) or fake (controller-runtime's fake client, no API server)")
	flag.IntVar(&c.machines, "machines", 100, "VCenterMachines to create and delete")
	flag.IntVar(&c.concurrency, "concurrency", 10, "--vcentermachine-concurrency of the controller")
	flag.DurationVar(&c.guestPoll, "guest-poll-interval", 10*time.Second, "--guest-poll-interval of the controller")
	flag.DurationVar(&c.taskPoll, "task-poll-interval", time.Second, "--task-poll-interval of the controller")
	flag.DurationVar(&c.reconcileInterval, "reconcile-interval", 0, "with -client fake: at most one reconcile per object per interval, as CAPI's controller builder does with kube-apiserver (1s); 0 is controller-runtime's plain controller")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "give up after this long (per machine count)")
	flag.DurationVar(&c.quiet, "quiet", 0, benchutil.QuietHelp)
	flag.StringVar(&c.sweep, "sweep", "", "machine counts to run one after another, each in a fresh process, e.g. 100,250,500,1000")
	flag.StringVar(&c.plotDir, "plot-dir", "", "with -sweep: write PNG plots of the sweep into this directory")
	flag.StringVar(&c.result, "result", "", "write the run as JSON to this file (the sweep reads it)")
	flag.BoolVar(&c.watch, "vcenter-watch", true, "the vCenter watch (false: the controller's --no-vcenter-watch, machines rely on the polls alone)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write the controller process's CPU profile (go tool pprof) to this file")
	flag.StringVar(&c.memProfile, "memprofile", "", "write the controller process's live heap (go tool pprof) to this file once every machine is gone")
	flag.BoolVar(&c.serveVCSim, "serve-vcsim", false, "internal: serve vcsim and play the guests in this process (the benchmark starts it as a child)")
	flag.BoolVar(&c.verbose, "v", false, "print the controller's logs to stderr")
	flag.Parse()
	err := error(nil)
	switch {
	case c.serveVCSim:
		serveVCSim()
	case c.client != "apiserver" && c.client != "fake":
		err = fmt.Errorf("-client %q: want apiserver or fake", c.client)
	case c.sweep != "":
		var counts []int
		if counts, err = benchutil.Counts(c.sweep); err == nil {
			_, err = benchutil.Sweep(counts, c.plotDir, os.Stdout, "sweep", "plot-dir")
		}
	default:
		err = benchutil.Profiled(c.cpuProfile, func() error { return run(c) })
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
