// Command vcenter measures the VCenterMachine lifecycle on govmomi's vcsim through the real
// controller (setup.Reconcilers) and a real kube-apiserver: N machines from create to
// provisioned and from delete to gone. It prints wall time, vSphere calls per VM by method, TLS
// connections opened and the controller process's memory.
//
//	go run ./test/bench/vcenter -machines 100
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

	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/test/envtest"
)

type config struct {
	machines, concurrency int
	guestPoll, taskPoll   time.Duration
	timeout               time.Duration
	serveVCSim            bool
	verbose               bool
}

func main() {
	var c config
	flag.IntVar(&c.machines, "machines", 100, "VCenterMachines to create and delete")
	flag.IntVar(&c.concurrency, "concurrency", 10, "--vcentermachine-concurrency of the controller")
	flag.DurationVar(&c.guestPoll, "guest-poll-interval", 10*time.Second, "--guest-poll-interval of the controller")
	flag.DurationVar(&c.taskPoll, "task-poll-interval", time.Second, "--task-poll-interval of the controller")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "give up after this long")
	flag.BoolVar(&c.serveVCSim, "serve-vcsim", false, "internal: serve vcsim in this process (the benchmark starts it as a child)")
	flag.BoolVar(&c.verbose, "v", false, "print the controller's logs to stderr")
	flag.Parse()
	if c.serveVCSim {
		serveVCSim()
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

	sim, err := startVCSim(ctx)
	if err != nil {
		return err
	}
	defer sim.stop()
	env, err := envtest.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	calls := &vcenter.Calls{}
	sessions := &vcenter.Sessions{Calls: calls}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: manager.CacheOptions("", 10*time.Minute), Client: manager.ClientOptions(),
	})
	if err != nil {
		return err
	}
	if err := setup.Reconcilers(ctx, mgr, setup.Options{
		VCenterMachineConcurrency: c.concurrency, VCenterClusterConcurrency: 2,
		ClusterCache: manager.ClusterCacheOptions{Concurrency: 2, QPS: 100, Burst: 200},
		PollInterval: c.guestPoll, TaskPollInterval: c.taskPoll, Sessions: sessions,
	}); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("cache did not sync")
	}
	k8s := mgr.GetClient()
	w := &workload{k8s: k8s, kubeconfig: env.KubeConfig, sim: sim, n: c.machines}
	if err := w.createCluster(ctx); err != nil {
		return err
	}
	go w.guest(ctx)

	r := &report{machines: c.machines, concurrency: c.concurrency, guestPoll: c.guestPoll, taskPoll: c.taskPoll}
	start := time.Now()
	before := calls.Snapshot()
	if err := w.createMachines(ctx); err != nil {
		return err
	}
	if err := w.waitProvisioned(ctx); err != nil {
		return err
	}
	r.add("create → provisioned", time.Since(start), before, calls.Snapshot(), sessions.Dials.Load())

	start, before, dials := time.Now(), calls.Snapshot(), sessions.Dials.Load()
	if err := w.deleteMachines(ctx); err != nil {
		return err
	}
	if err := w.waitGone(ctx); err != nil {
		return err
	}
	r.add("delete → gone", time.Since(start), before, calls.Snapshot(), sessions.Dials.Load()-dials)
	r.print(os.Stdout)
	return nil
}
