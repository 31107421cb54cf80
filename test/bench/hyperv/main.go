// Command hyperv measures the HyperVMachine lifecycle on simulated Hyper-V hosts (hypervsim,
// reached through the real WinRM client) through the real controller (setup.Reconcilers) and a
// real kube-apiserver: N machines from create to provisioned and from delete to gone. It prints
// wall time, WinRM operations and HTTP round trips per VM, where the VMs were placed and the
// controller process's memory.
//
//	go run ./test/bench/hyperv -machines 50 -hosts 3
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/test/envtest"
)

type config struct {
	machines, hosts, concurrency int
	poll, taskPoll               time.Duration
	timeout                      time.Duration
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
	flag.IntVar(&c.serveHosts, "serve-hosts", 0, "internal: serve this many hosts in this process (the benchmark starts it as a child)")
	flag.BoolVar(&c.verbose, "v", false, "print the controller's logs to stderr")
	flag.Parse()
	if c.serveHosts > 0 {
		serveHosts(c.serveHosts)
		return
	}
	if err := run(c); err != nil {
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

	conns := &hyperv.Conns{}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
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
	w := &workload{k8s: mgr.GetClient(), kubeconfig: env.KubeConfig, hosts: sim.hosts, n: c.machines}
	if err := w.createCluster(ctx); err != nil {
		return err
	}

	r := &report{machines: c.machines, hosts: c.hosts, concurrency: c.concurrency, poll: c.poll, taskPoll: c.taskPoll}
	start, before := time.Now(), snapshot(&conns.Counters)
	if err := w.createMachines(ctx); err != nil {
		return err
	}
	if err := w.waitProvisioned(ctx); err != nil {
		return err
	}
	r.add("create → provisioned", time.Since(start), before, snapshot(&conns.Counters))
	r.placement = w.placement
	for _, h := range sim.hosts {
		r.hostNames = append(r.hostNames, h.Name)
	}

	start, before = time.Now(), snapshot(&conns.Counters)
	if err := w.deleteMachines(ctx); err != nil {
		return err
	}
	if err := w.waitGone(ctx); err != nil {
		return err
	}
	r.add("delete → gone", time.Since(start), before, snapshot(&conns.Counters))
	r.print(os.Stdout)
	return nil
}
