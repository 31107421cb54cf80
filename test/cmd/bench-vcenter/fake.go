package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/benchutil"
)

// fakeController is the VCenterMachine reconciler of setup.NewVCenterMachineReconciler on
// controller-runtime's fake client, without an API server: a client-go workqueue with
// controller-runtime's default rate limiter and worker goroutines play the controller. A write
// that changes a VCenterMachine, or a Machine that points at one, enqueues it, as its watches
// would.
type fakeController struct {
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	r     reconcile.Reconciler
	// interval, when set, plays CAPI's builder: at most one reconcile per object per interval.
	interval time.Duration

	reconciles atomic.Int64
	busy       atomic.Int64 // ns in Reconcile, summed over workers

	mu          sync.Mutex
	live        map[client.ObjectKey]bool // VCenterMachines that exist
	provisioned map[client.ObjectKey]bool
	last        map[reconcile.Request]time.Time // start of each object's last reconcile
}

// startFake builds the reconciler as setup.Reconcilers does and starts o.VCenterMachineConcurrency
// workers; the returned env's client is what the workload writes with. interval > 0 adds CAPI's
// builder's per-object limit.
func startFake(ctx context.Context, o setup.Options, sessions *session.Sessions, reqs *benchutil.Requests, interval time.Duration) (*env, error) {
	scheme := setup.Scheme()
	f := &fakeController{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
			workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: "vcentermachine"}),
		interval: interval, live: map[client.ObjectKey]bool{}, provisioned: map[client.ObjectKey]bool{},
		last: map[reconcile.Request]time.Time{},
	}
	base := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&infrav1.VCenterMachine{}, &infrav1.VCenterCluster{}, &clusterv1.Machine{}, &clusterv1.Cluster{}).Build()
	// The fake client leaves metadata.uid empty; the API server sets it (owner references need it).
	base = interceptor.NewClient(base, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetUID() == "" {
			obj.SetUID(uuid.NewUUID())
		}
		return c.Create(ctx, obj, opts...)
	}})
	watched := interceptor.NewClient(base, observe(f.changed))
	timed := func(_ context.Context, _ client.WithWatch, k call) {
		reqs.Add(k.verb+" "+resource(scheme, k.obj, k.sub), time.Since(k.start))
	}
	c := interceptor.NewClient(watched, observe(timed))
	// The workload cluster (Nodes) is a second fake client behind CAPI's unit-test ClusterCache.
	workloadCluster := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), observe(timed))
	cc := clustercache.NewFakeClusterCache(workloadCluster, client.ObjectKey{Namespace: ns, Name: "win"})

	// As setup.Reconcilers fills the session cache and the provider.
	o.Sessions, o.Gate = sessions, &logingate.Gate{}
	setup.VCenterSessions(o)
	provider := &vcenter.Provider{Client: c, Sessions: sessions, IdentityNamespace: o.IdentityNamespace}
	r := setup.NewVCenterMachineReconciler(c, c, cc, provider, o)
	r.Recorder = &events.FakeRecorder{} // events are dropped
	// The vCenter watch wakes machines into the queue, as setup.Reconcilers wires it.
	if o.Wakes != nil && !o.NoVCenterWatch {
		r.Wakes = o.Wakes
		r.Wakes.Feed(f.queue)
		sessions.Wake = r.Wakes.Wake
	}
	r.Default()
	f.r = r
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "vcentermachine")
	for range max(o.VCenterMachineConcurrency, 1) {
		go func() {
			for f.next(ctrl.LoggerInto(ctx, log)) {
			}
		}()
	}
	go func() { <-ctx.Done(); f.queue.ShutDown() }()
	mode := "fake client"
	if interval > 0 {
		mode += fmt.Sprintf(" + %s per object", interval)
	}
	return &env{mode: mode, requestUnit: "fake client calls", k8s: watched, progress: f.progress, stop: f.queue.ShutDown,
		reconciles: func() (int, time.Duration) { return int(f.reconciles.Load()), time.Duration(f.busy.Load()) }}, nil
}

// next runs one reconcile and requeues its request as controller-runtime's controller does
// (with CAPI's builder's one-minute reconcile timeout); false once the queue shut down.
func (f *fakeController) next(ctx context.Context) bool {
	req, shutdown := f.queue.Get()
	if shutdown {
		return false
	}
	defer f.queue.Done(req)
	start := time.Now()
	if wait := f.held(req, start); wait > 0 {
		f.reconciles.Add(1) // CAPI's builder returns at once; controller-runtime counts it
		f.queue.Forget(req)
		f.queue.AddAfter(req, wait)
		return true
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	res, err := f.r.Reconcile(ctrl.LoggerInto(rctx, ctrl.LoggerFrom(ctx).WithValues("VCenterMachine", req.String())), req)
	cancel()
	f.busy.Add(int64(time.Since(start)))
	f.reconciles.Add(1)
	switch {
	case err != nil && errors.Is(err, reconcile.TerminalError(nil)):
		f.queue.Forget(req)
	case err != nil:
		ctrl.LoggerFrom(ctx).Error(err, "Reconciler error", "VCenterMachine", req.String())
		f.queue.AddRateLimited(req)
	case res.RequeueAfter > 0:
		f.queue.Forget(req)
		f.queue.AddAfter(req, max(res.RequeueAfter, time.Until(start.Add(f.interval))))
	case res.Requeue: //nolint:staticcheck // controller-runtime still honours it
		f.queue.AddRateLimited(req)
	default:
		f.queue.Forget(req)
	}
	return true
}

// held is how long CAPI's builder would hold back a reconcile of req starting now (0: run it).
func (f *fakeController) held(req reconcile.Request, now time.Time) time.Duration {
	if f.interval <= 0 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if wait := f.last[req].Add(f.interval).Sub(now); wait > 0 {
		return wait
	}
	f.last[req] = now
	return 0
}

// changed plays the controller's watches on a finished call: a write that changed a
// VCenterMachine (other than its status alone), or a Machine that points at one, enqueues it. It also follows which
// VCenterMachines exist and which are provisioned, for the workload's waits.
func (f *fakeController) changed(ctx context.Context, c client.WithWatch, k call) {
	write := k.verb != "get" && k.verb != "list"
	changed := k.err == nil && write && (k.rvBefore == "" || k.obj.(client.Object).GetResourceVersion() != k.rvBefore)
	switch o := k.obj.(type) {
	case *infrav1.VCenterMachine:
		switch {
		case k.verb == "get" && apierrors.IsNotFound(k.err):
			f.track(k.key, false, false)
		case k.verb == "deletecollection" && k.err == nil:
			list := &infrav1.VCenterMachineList{}
			if err := c.List(ctx, list, client.InNamespace(ns)); err == nil {
				for i := range list.Items {
					f.enqueue(client.ObjectKeyFromObject(&list.Items[i]))
				}
			}
		case changed:
			key := client.ObjectKeyFromObject(o)
			gone := !o.DeletionTimestamp.IsZero() && len(o.Finalizers) == 0
			f.track(key, !gone, ptr.Deref(o.Status.Initialization.Provisioned, false))
			if k.sub != "status" { // the controller drops the echo of its status writes (notOwnStatus)
				f.enqueue(key)
			}
		}
	case *clusterv1.Machine:
		if ref := o.Spec.InfrastructureRef; changed && ref.Kind == "VCenterMachine" {
			f.enqueue(client.ObjectKey{Namespace: o.Namespace, Name: ref.Name})
		}
	}
}

func (f *fakeController) enqueue(key client.ObjectKey) {
	f.queue.Add(reconcile.Request{NamespacedName: key})
}

func (f *fakeController) track(key client.ObjectKey, live, provisioned bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live[key], f.provisioned[key] = live, live && provisioned
}

// progress counts the VCenterMachines that exist and those provisioned.
func (f *fakeController) progress(context.Context) (live, provisioned int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, l := range f.live {
		if l {
			live++
		}
		if f.provisioned[k] {
			provisioned++
		}
	}
	return live, provisioned, nil
}
