// Command chaos runs the chaos soak (test/integration/chaos) on each provider and prints its figures; it exits
// 1 when an invariant broke. `make chaos CHAOS_ARGS="-duration 5m -machines 200"`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/integration/chaos"
)

func main() { os.Exit(run()) }

// run soaks and returns the exit code.
func run() int {
	c := chaos.Config{Rates: chaos.DefaultRates}
	providers := flag.String("providers", "vcenter,hyperv", "providers to soak, one after the other")
	machines := flag.Int("machines", 20, "machines in all, split evenly over the providers")
	flag.DurationVar(&c.Duration, "duration", 2*time.Minute, "fault window per provider (the rollout starts halfway)")
	flag.Uint64Var(&c.Seed, "seed", 1, "random seed of the faults")
	flag.IntVar(&c.Restarts, "restarts", 1, "manager restarts (leader handovers) per fault window")
	flag.IntVar(&c.SimRestarts, "sim-restarts", 1, "restarts of vCenter's service or of a Hyper-V host's WinRM service during the rollout")
	flag.DurationVar(&c.Outage, "outage", 3*time.Second, "how long the restarted endpoint is away")
	flag.DurationVar(&c.Converge, "converge", 20*time.Minute, "bound of the wait for convergence and for the deletion")
	flag.Float64Var(&c.Rates.Delay, "delay-rate", c.Rates.Delay, "vSphere: chance of a delayed call")
	flag.Float64Var(&c.Rates.Drop, "drop-rate", c.Rates.Drop, "vSphere: chance of a call dropped before it is sent")
	flag.Float64Var(&c.Rates.Lose, "lose-rate", c.Rates.Lose, "chance of an answer lost after the server acted (Hyper-V: x10 per quarter second)")
	flag.Float64Var(&c.Rates.Expire, "expire-rate", c.Rates.Expire, "vSphere: chance of a call refused as from an expired session")
	flag.Float64Var(&c.Rates.Fail, "fail-rate", c.Rates.Fail, "vSphere: chance that a clone's task fails")
	flag.DurationVar(&c.Rates.MaxDelay, "max-delay", c.Rates.MaxDelay, "longest injected delay")
	logs := flag.Bool("v", false, "print the controllers' logs")
	flag.Parse()

	out := io.Discard
	if *logs {
		out = os.Stderr
	}
	c.Log = zap.New(zap.WriteTo(out))
	dir, err := os.MkdirTemp("", "capwin-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	c.ControllersLog = filepath.Join(dir, "controllers.log")
	var also io.Writer
	if *logs {
		also = os.Stderr
	}
	f, err := harness.LogControllers(c.ControllersLog, also)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = f.Close() }()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	list := strings.Split(*providers, ",")
	c.Machines = max(1, *machines/len(list))
	begin := time.Now()
	progress := func(format string, args ...any) {
		fmt.Printf("%7.1fs "+format+"\n", append([]any{time.Since(begin).Seconds()}, args...)...)
	}
	var reports []*chaos.Report
	for _, p := range list {
		if p != harness.VCenter && p != harness.HyperV {
			fmt.Fprintf(os.Stderr, "unknown provider %q\n", p)
			return 2
		}
		c.Provider = p
		r, err := chaos.Run(ctx, c, progress)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", p, err)
			return 2
		}
		reports = append(reports, r)
	}
	fmt.Printf("\nchaos soak: %d machines per provider, %s of faults, seed %d, %s in all\n\n", c.Machines, c.Duration, c.Seed,
		time.Since(begin).Round(time.Second))
	if err := chaos.Print(os.Stdout, reports); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, r := range reports {
		if len(r.Violations) > 0 {
			return 1
		}
	}
	return 0
}
