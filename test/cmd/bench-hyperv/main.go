// Command bench-hyperv measures the HyperVMachine lifecycle on simulated Hyper-V hosts (hypervsim,
// reached through the real WinRM client) through the real controller (setup.Reconcilers) and a
// real kube-apiserver: N machines from create to provisioned and from delete to gone. It prints
// wall time, reconciles, WinRM operations, HTTP round trips and API requests per VM, where the
// workers' time went, where the VMs were placed, CPU, memory and goroutines; -sweep runs several
// counts, each in a fresh process, and -plot-dir writes PNG plots of them.
//
//	go -C test run ./cmd/bench-hyperv -machines 50 -hosts 3
//	go -C test run ./cmd/bench-hyperv -machines 1000 -hosts 20
//	go -C test run ./cmd/bench-hyperv -hosts 20 -sweep 100,250,500,1000 -plot-dir ../docs/img
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	capwinmetrics "github.com/capwin/capwin/internal/test/metrics"
	"github.com/capwin/capwin/test/framework/benchutil"
)

type config struct {
	machines, hosts, concurrency int
	poll, taskPoll               time.Duration
	timeout, quiet               time.Duration
	sweep, plotDir, cpuProfile   string
	result                       string
	serveHosts                   int
	verbose                      bool
}

func main() {
	var c config
	flag.IntVar(&c.machines, "machines", 50, "HyperVMachines to create and delete")
	flag.IntVar(&c.hosts, "hosts", 3, "simulated Hyper-V hosts")
	flag.IntVar(&c.concurrency, "concurrency", 10, "--hypervmachine-concurrency of the controller")
	flag.DurationVar(&c.poll, "poll-interval", 10*time.Second, "--guest-poll-interval of the controller")
	flag.DurationVar(&c.taskPoll, "task-poll-interval", time.Second, "--task-poll-interval of the controller")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "give up after this long")
	flag.DurationVar(&c.quiet, "quiet", 0, benchutil.QuietHelp)
	flag.StringVar(&c.sweep, "sweep", "", "machine counts to run one after another, each in a fresh process, e.g. 100,250,500,1000")
	flag.StringVar(&c.plotDir, "plot-dir", "", "with -sweep: write PNG plots of the sweep into this directory")
	flag.StringVar(&c.result, "result", "", "write the run as JSON to this file (the sweep reads it)")
	flag.IntVar(&c.serveHosts, "serve-hosts", 0, "internal: serve this many hosts in this process (the benchmark starts it as a child)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write the controller process's CPU profile (go tool pprof) to this file")
	flag.BoolVar(&c.verbose, "v", false, "print the controller's logs to stderr")
	flag.Parse()
	var err error
	switch {
	case c.serveHosts > 0:
		serveHosts(c.serveHosts)
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

func run(c config) error {
	logs := io.Discard
	if c.verbose {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()

	sim, err := startHosts(ctx, c.hosts)
	if err != nil {
		return err
	}
	defer sim.stop()
	env, err := envtest.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	conns, reqs := &hyperv.Conns{}, &benchutil.Requests{}
	cfg := rest.CopyConfig(env.Config) // the manager's requests are counted
	reqs.Wrap(cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: manager.CacheOptions("", 10*time.Minute), Client: manager.ClientOptions(),
	})
	if err != nil {
		return err
	}
	if err := setup.Reconcilers(ctx, mgr, setup.Options{
		HyperVMachineConcurrency: c.concurrency, HyperVClusterConcurrency: 2,
		VCenterMachineConcurrency: 1, VCenterClusterConcurrency: 1,
		ClusterCache: manager.ClusterCacheOptions{Concurrency: 2, QPS: 100, Burst: 200},
		PollInterval: c.poll, TaskPollInterval: c.taskPoll, HostRecheck: time.Minute, Conns: conns,
	}); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("cache did not sync")
	}
	// The workload writes with a client of its own (not counted) and reads the manager's cache.
	k8s, err := client.New(env.Config, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	w := &workload{k8s: k8s, cache: mgr.GetClient(), kubeconfig: env.KubeConfig, hosts: sim.hosts, n: c.machines}
	if err := w.createCluster(ctx); err != nil {
		return err
	}

	r := &benchutil.Run{Bench: "hyperv", Mode: "kube-apiserver", Machines: c.machines, Workers: c.concurrency,
		Unit: "WinRM operations", RequestUnit: "API requests"}
	m := &benchutil.Meter{Requests: reqs, Quiet: c.quiet,
		Reconciles: func() (int, time.Duration) { return benchutil.Reconciles("hypervmachine") },
		Calls: func() (map[string]int, time.Duration) {
			_, _, spent := capwinmetrics.WinRM()
			return benchutil.CountsBy("capwin_winrm_operations_total", "operation"), spent
		},
		Counters: func() map[string]int64 {
			_, trips, _ := capwinmetrics.WinRM()
			return map[string]int64{"round trips": trips}
		},
	}
	if err := m.Measure(ctx, r,
		benchutil.Steps{Name: "create → provisioned", Do: []func(context.Context) error{w.createMachines, w.waitProvisioned}},
		benchutil.Steps{Name: "delete → gone", Do: []func(context.Context) error{w.deleteMachines, w.waitGone, w.deleteRest}},
	); err != nil {
		return err
	}
	if err := printReport(os.Stdout, c, r, sim.hosts, w.placement); err != nil {
		return err
	}
	if c.result != "" {
		return r.Save(c.result)
	}
	return nil
}
