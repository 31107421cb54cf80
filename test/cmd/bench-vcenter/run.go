package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	capwinmetrics "github.com/capwin/capwin/internal/test/metrics"
	"github.com/capwin/capwin/test/framework/benchutil"
	"github.com/capwin/capwin/test/framework/vcsim"
)

// callTimer sums the time of the workers' vSphere calls (Sessions.WrapTransport: inside the call
// counter). The watch loop's calls (its long waits for updates above all) run on no worker and
// are left out.
type callTimer struct{ nanos atomic.Int64 }

func (t *callTimer) wrap(next soap.RoundTripper) soap.RoundTripper {
	return timedCalls{next: next, t: t}
}

type timedCalls struct {
	next soap.RoundTripper
	t    *callTimer
}

func (c timedCalls) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	switch req.(type) {
	case *methods.WaitForUpdatesExBody, *methods.ModifyListViewBody, *methods.CreateListViewBody, *methods.DestroyViewBody,
		*methods.CreateFilterBody, *methods.CreatePropertyCollectorBody, *methods.DestroyPropertyCollectorBody:
		return c.next.RoundTrip(ctx, req, res)
	}
	start := time.Now()
	err := c.next.RoundTrip(ctx, req, res)
	c.t.nanos.Add(int64(time.Since(start)))
	return err
}

// run measures one machine count.
func run(c config) error {
	logs := io.Discard
	if c.verbose {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	ctx, cancel := context.WithTimeout(ctrl.LoggerInto(context.Background(), ctrl.Log), c.timeout)
	defer cancel()

	sim, err := startVCSim(ctx)
	if err != nil {
		return err
	}
	defer sim.stop()
	calls, timer, reqs := &vcsim.Calls{}, &callTimer{}, &benchutil.Requests{}
	sessions := &session.Sessions{WrapTransport: vcsim.Chain(calls.Wrap, timer.wrap)}
	o := setup.Options{
		VCenterMachineConcurrency: c.concurrency, VCenterClusterConcurrency: 2,
		ClusterCache: manager.ClusterCacheOptions{Concurrency: 2, QPS: 100, Burst: 200},
		PollInterval: c.guestPoll, TaskPollInterval: c.taskPoll, Wakes: &machine.Wakes{}, NoVCenterWatch: !c.watch,
	}
	start := startAPIServer
	if c.client == "fake" {
		start = func(ctx context.Context, o setup.Options, s *session.Sessions, reqs *benchutil.Requests) (*env, error) {
			return startFake(ctx, o, s, reqs, c.reconcileInterval)
		}
	}
	e, err := start(ctx, o, sessions, reqs)
	if err != nil {
		return err
	}
	defer e.stop()
	w := &workload{k8s: e.k8s, kubeconfig: e.kubeconfig, sim: sim, n: c.machines, progress: e.progress}
	if err := w.createCluster(ctx); err != nil {
		return err
	}

	r := &benchutil.Run{Bench: "vcenter", Mode: e.mode, Machines: c.machines, Workers: c.concurrency,
		Unit: "vSphere calls", RequestUnit: e.requestUnit}
	m := &benchutil.Meter{Requests: reqs, Reconciles: e.reconciles, Quiet: c.quiet,
		Calls: func() (map[string]int, time.Duration) { return calls.Snapshot(), time.Duration(timer.nanos.Load()) }}
	m.Counters = func() map[string]int64 {
		changed, nothing := o.Wakes.Counts()
		return map[string]int64{"dials": capwinmetrics.VCenterConnections(), "woken changed": int64(changed), "woken nothing": int64(nothing)}
	}
	if err := m.Measure(ctx, r,
		benchutil.Steps{Name: "create → provisioned", Do: []func(context.Context) error{w.createMachines, w.waitProvisioned}},
		benchutil.Steps{Name: "delete → gone", Do: []func(context.Context) error{w.deleteMachines, w.waitGone, w.deleteRest}},
	); err != nil {
		return err
	}
	if err := benchutil.HeapProfile(c.memProfile); err != nil {
		return err
	}

	fmt.Printf("VCenterMachines on vcsim (VPX, separate process with the guests) through the VCenterMachine reconciler and %s\n", e.mode)
	fmt.Printf("machines=%d  vcentermachine-concurrency=%d  guest-poll-interval=%s  task-poll-interval=%s  reconcile-interval=%s  GOMAXPROCS=%d\n",
		c.machines, c.concurrency, c.guestPoll, c.taskPoll, c.reconcileInterval, runtime.GOMAXPROCS(0))
	if err := r.Print(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("TLS connections opened to vCenter: %d to create, %d to delete\n", r.Phases[0].Counters["dials"], r.Phases[1].Counters["dials"])
	for _, p := range r.Phases {
		fmt.Printf("vCenter watch, %s: %d woken reconciles changed the machine, %d found nothing to do\n",
			p.Name, p.Counters["woken changed"], p.Counters["woken nothing"])
	}
	fmt.Println()
	if c.result != "" {
		return r.Save(c.result)
	}
	return nil
}
