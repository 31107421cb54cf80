// Command bench-e2e measures capwin on the local end-to-end harness (test/framework/harness): a management
// kube-apiserver + etcd with CAPI's core controllers and capwin's providers in this process, a
// real workload cluster, vcsim (or simulated Hyper-V hosts) and simulated Windows guests that
// join for real. It creates a MachineDeployment of N Windows machines, then (with M > 0) scales
// it to 0, creates M machines afresh and rolls them out to another Windows image, and finally
// deletes the Cluster. It prints a markdown report: wall times, reconciles per controller,
// hypervisor calls and management-apiserver requests per machine, and the process's memory.
//
//	go -C test run ./cmd/bench-e2e -machines 100 -rollout-machines 50 -max-surge 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/capwin/capwin/test/framework/harness"
)

type config struct {
	machines, rolloutMachines, maxSurge int
	provider                            string
	concurrency                         int
	guestPoll                           time.Duration
	timeout                             time.Duration
	logDir                              string
	anchor                              bool
	guestStepTime                       time.Duration
	noVCenterWatch                      bool
	hypervGuestWatch                    time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.machines, "machines", 100, "Windows machines of the create phase")
	flag.IntVar(&c.rolloutMachines, "rollout-machines", 50, "machines of the rollout phase (0 = skip it)")
	flag.IntVar(&c.maxSurge, "max-surge", 10, "maxSurge of the rollout (maxUnavailable is 0)")
	flag.StringVar(&c.provider, "provider", harness.VCenter, "vcenter or hyperv")
	flag.IntVar(&c.concurrency, "concurrency", 10, "--vcentermachine/--hypervmachine/--windowsconfig-concurrency (the managers' defaults)")
	flag.DurationVar(&c.guestPoll, "guest-poll-interval", time.Second, "--guest-poll-interval of the infrastructure manager (1s as the e2e tests; the manager's default is 10s)")
	flag.DurationVar(&c.timeout, "timeout", 90*time.Minute, "give up after this long (whole run)")
	flag.DurationVar(&c.guestStepTime, "guest-step-time", 0, "each bootstrap step of a simulated guest takes at least this long (14s: a 4-minute bootstrap, as on Windows); the report then has the guest-wait table")
	flag.BoolVar(&c.noVCenterWatch, "no-vcenter-watch", false, "--no-vcenter-watch of the infrastructure manager: VCenterMachines rely on polls alone")
	flag.DurationVar(&c.hypervGuestWatch, "hyperv-guest-watch-interval", 0, "--hyperv-guest-watch-interval of the infrastructure manager (0: the manager's default)")
	flag.BoolVar(&c.anchor, "anchor", false, "after capwin's phases, run the rollout phases again on Cluster API's in-memory provider and print the side-by-side table")
	flag.StringVar(&c.logDir, "log-dir", "", "controller and workload cluster logs (default: a new temporary directory, kept)")
	flag.Parse()
	if c.machines < 1 || c.rolloutMachines < 0 || c.maxSurge < 1 {
		fmt.Fprintln(os.Stderr, "bench: need -machines >= 1, -rollout-machines >= 0, -max-surge >= 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
