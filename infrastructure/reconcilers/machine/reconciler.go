// Package machine is the one machine lifecycle of capwin: a state machine over a Backend that
// VCenterMachine and HyperVMachine share. The reconciler owns ordering, conditions and patching;
// a backend owns one hypervisor API.
package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/finalizers"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/admit"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/owner"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcentermachines;hypervmachines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcentermachines/status;hypervmachines/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcentermachines/finalizers;hypervmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=hypervclusters,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Kind describes the machine kind a Reconciler serves.
type Kind struct {
	// Name is the controller name, e.g. "vcentermachine".
	Name string
	// Finalizer blocks deletion until the VM is gone.
	Finalizer  string
	NewObject  func() hypervisor.Object
	NewList    func() client.ObjectList
	NewCluster func() client.Object
	// Backend chooses the hypervisor API once per reconcile.
	Backend hypervisor.BackendFor
	// Admit and AdmitCluster are the create paths of the machine's and its infrastructure
	// cluster's admission webhooks: a machine either would reject is refused (InvalidSpec)
	// before the hypervisor is asked anything. Nil admits everything.
	Admit, AdmitCluster admit.Check
	// ClusterChanged, when set, maps a change of the infrastructure cluster (NewCluster) to the
	// machines to look at again, e.g. those whose VM a failover cluster moved off a failed host.
	ClusterChanged handler.MapFunc
	// DeleteTaskWait is how long a delete waits, inside its reconcile, for the power-off and
	// destroy tasks it started, so that it goes on at once instead of in the next reconcile,
	// which CAPI's per-object rate limit holds back a second (vCenter: its tasks are quick and
	// a read is one call). Zero leaves each task to the next reconcile.
	DeleteTaskWait time.Duration
}

// Reconciler drives one machine kind through its lifecycle.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache where a stale read could create a second VM.
	APIReader    client.Reader
	ClusterCache clustercache.ClusterCache
	Kind         Kind
	Recorder     events.EventRecorder
	// WatchFilterValue restricts reconciliation to objects with this watch-filter label value.
	WatchFilterValue string
	// PollInterval is how often a machine that waits for its guest (addresses, bootstrap report,
	// node) is looked at again.
	PollInterval time.Duration
	// TaskPollInterval is the first wait before a hypervisor task is read again; it grows with
	// the task's age up to ten times this value.
	TaskPollInterval time.Duration
	// CreateGrace is how long a create whose task reference was lost (manager stopped between the
	// call and the status write) is given to show its VM before the create is tried again.
	CreateGrace time.Duration
	// CredentialRecheck is how often a machine whose hypervisor refused the credentials reads
	// their Secret again, to try them once it changed (default 30s).
	CredentialRecheck time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Wakes, when set, are a hypervisor watch's wake-ups of machines whose VM or task changed
	// (vCenter's property collector); the polls above are then a safety net.
	Wakes *Wakes

	// clocks time each machine's bootstrap steps for the metrics.
	clocks clocks
	// indexed is true once the manager's cache indexes the machines by computer name.
	indexed bool
	// controller receives the workload clusters' Node events (watchNodes).
	controller capicontrollerutil.Controller
}

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.APIReader == nil || r.ClusterCache == nil || r.Kind.NewObject == nil || r.Kind.Backend == nil {
		return fmt.Errorf("%s: Client, APIReader, ClusterCache and Kind are required", r.Kind.Name)
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(r.Kind.Name + "-controller")
	}
	r.Default()
	log := ctrl.LoggerFrom(ctx).WithValues("controller", r.Kind.Name)
	gvk, err := apiutil.GVKForObject(r.Kind.NewObject(), mgr.GetScheme())
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, r.Kind.NewObject(), computerNameField, indexComputerName); err != nil {
		return fmt.Errorf("%s: index computer names: %w", r.Kind.Name, err)
	}
	r.indexed = true
	clusterToMachines, err := util.ClusterToTypedObjectsMapper(mgr.GetClient(), r.Kind.NewList(), mgr.GetScheme())
	if err != nil {
		return err
	}
	b := capicontrollerutil.NewControllerManagedBy(mgr, log).
		For(r.Kind.NewObject(), builder.WithPredicates(notOwnStatus(r.Kind.Finalizer), owner.OwnedOrDeleting)).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToInfra(gvk))).
		Watches(&ipamv1.IPAddressClaim{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), r.Kind.NewObject(), handler.OnlyControllerOwner())).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToMachines),
			predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log))
	if r.Kind.ClusterChanged != nil {
		b = b.Watches(r.Kind.NewCluster(), handler.EnqueueRequestsFromMapFunc(r.Kind.ClusterChanged))
	}
	if r.Wakes != nil {
		b = b.WatchesRawSource(r.Wakes.source())
	}
	c, err := b.Build(ctx, r)
	r.controller = c
	return err
}

// Reconcile follows CAPI's order: object -> owner Machine -> Cluster -> finalizer -> writer
// (patch) -> paused -> deferred summary + patch -> delete | refuse | normal. A machine (or its
// infrastructure cluster) that its admission webhook would reject is refused (InvalidSpec).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	log := ctrl.LoggerFrom(ctx)
	obj := r.Kind.NewObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.clocks.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !manager.InShard(obj, r.WatchFilterValue) {
		log.V(4).Info("Skipping: the object belongs to another shard", "watchFilter", r.WatchFilterValue)
		return ctrl.Result{}, nil
	}
	// The webhook's defaults apply to every machine (before the patch helper is made, so they
	// are used but never written); its rules only to one with nothing on the hypervisor yet. A
	// machine whose VM may exist stays managed, as the webhooks admit updates of a spec stored
	// before a rule was added (and its spec is not applied to the VM again).
	fresh := untouched(obj.GetMachineStatus())
	rejected := r.admit(ctx, r.Kind.Admit, obj)
	if !fresh {
		rejected = nil
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, metav1.ObjectMeta{Namespace: obj.GetNamespace(), OwnerReferences: obj.GetOwnerReferences()})
	if err != nil || machine == nil {
		if machine == nil && err == nil {
			log.Info("Waiting for the Machine controller to set the owner reference")
		}
		return ctrl.Result{}, err
	}
	log = log.WithValues("Machine", klog.KObj(machine))
	cluster, err := util.GetClusterFromMetadata(ctx, r.Client, machine.ObjectMeta)
	if err != nil {
		if apierrors.IsNotFound(err) || errors.Is(err, util.ErrNoCluster) {
			log.Info("Waiting for the Machine's Cluster")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	log = log.WithValues("Cluster", klog.KObj(cluster))
	ctx = ctrl.LoggerInto(ctx, log)

	// A machine refused from the start never had a VM: it needs no finalizer. The patch that adds
	// it updates obj, so this reconcile goes on (its echo is dropped: notOwnStatus), and the
	// Paused condition of a machine that is not paused goes out with its status patch: each extra
	// reconcile would hold back, by CAPI's one-per-second limit, the one the bootstrap data starts.
	if rejected == nil || controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer) {
		if _, err := finalizers.EnsureFinalizer(ctx, r.Client, obj, r.Kind.Finalizer); err != nil {
			return ctrl.Result{}, err
		}
	}
	helper := newWriter(r.Client, obj)
	if isPaused(cluster, obj) {
		_, _, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, obj)
		return ctrl.Result{}, err
	}
	setNotPaused(obj) // written with the rest of the status, by the patch below
	defer func() {
		if err := r.patch(ctx, helper, obj, rerr == nil); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, err})
		}
	}()

	s := &hypervisor.Scope{Cluster: cluster, Machine: machine, InfraMachine: obj, Spec: hypervisor.SpecOf(obj)}
	defer r.tally(s)() // runs before the patch: it compares status as the reconcile leaves it
	if s.InfraCluster, err = r.infraCluster(ctx, cluster); err != nil {
		return ctrl.Result{}, err
	}
	// persist writes status mid-reconcile (write-ahead of a create) and restarts the patch
	// helper from what was written, so the final patch diffs against it.
	persist := func() error {
		if err := r.patch(ctx, helper, obj, false); err != nil {
			return err
		}
		helper = newWriter(r.Client, obj)
		return nil
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, s, persist)
	}
	if fresh && rejected == nil && s.InfraCluster != nil {
		rejected = r.admit(ctx, r.Kind.AdmitCluster, s.InfraCluster)
	}
	if rejected != nil {
		admit.Refuse(obj, infrav1.VMProvisionedCondition, rejected, r.Recorder)
		return ctrl.Result{RequeueAfter: admit.Recheck}, nil
	}
	return r.reconcileNormal(ctx, s, persist)
}

// untouched reports whether nothing was sent to the hypervisor for the machine yet: only then
// is it refused for a spec, its own or its cluster's, that a webhook would reject.
func untouched(st *infrav1.MachineStatus) bool {
	return st.Task == "" && st.VM == (infrav1.VMReference{}) && !ptr.Deref(st.Initialization.Provisioned, false)
}

// admit runs check (nil admits everything) on obj.
func (r *Reconciler) admit(ctx context.Context, check admit.Check, obj runtime.Object) error {
	if check == nil {
		return nil
	}
	return check(ctx, obj)
}

// infraCluster reads the Cluster's infrastructure object; nil when it is not of this provider.
func (r *Reconciler) infraCluster(ctx context.Context, cluster *clusterv1.Cluster) (client.Object, error) {
	ref := cluster.Spec.InfrastructureRef
	obj := r.Kind.NewCluster()
	gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme())
	if err != nil {
		return nil, err
	}
	if !ref.IsDefined() || ref.Kind != gvk.Kind || ref.APIGroup != gvk.Group {
		return nil, nil
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return obj, nil
}

func (r *Reconciler) patch(ctx context.Context, helper *writer, obj hypervisor.Object, success bool) error {
	if err := conditions.SetSummaryCondition(obj, obj, infrav1.ReadyCondition,
		conditions.ForConditionTypes{infrav1.VMProvisionedCondition, infrav1.BootstrapSucceededCondition},
		conditions.IgnoreTypesIfMissing{infrav1.BootstrapSucceededCondition}); err != nil {
		return err
	}
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{
		clusterv1.PausedCondition, infrav1.ReadyCondition, infrav1.VMProvisionedCondition, infrav1.BootstrapSucceededCondition,
	}}}
	if success {
		obj.GetMachineStatus().ObservedGeneration = obj.GetGeneration()
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	return helper.write(ctx, obj, opts...)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Default fills unset intervals (SetupWithManager calls it; reconcilers driven by hand must).
func (r *Reconciler) Default() {
	r.PollInterval = defaultDuration(r.PollInterval, 10*time.Second)
	r.TaskPollInterval = defaultDuration(r.TaskPollInterval, time.Second)
	r.CreateGrace = defaultDuration(r.CreateGrace, 5*time.Minute)
	r.CredentialRecheck = defaultDuration(r.CredentialRecheck, 30*time.Second)
}

func defaultDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
