package windowsconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/webhooks"
	"github.com/capwin/capwin/internal/admit"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/owner"
)

// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigs,verbs=list;watch;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigs/status,verbs=patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigs/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler turns WindowsConfigs into bootstrap data Secrets.
type Reconciler struct {
	Client client.Client
	// SecretCachingClient reads the cluster CA Secret from the cache (only Secrets with the
	// cluster-name label are cached).
	SecretCachingClient client.Client
	ClusterCache        clustercache.ClusterCache
	Recorder            events.EventRecorder
	// WatchFilterValue restricts reconciliation to objects with this cluster.x-k8s.io/watch-filter label.
	WatchFilterValue string
	TokenTTL         time.Duration
	// JoinTimeout is how long a Machine may take to get a Node after its first bootstrap token;
	// then the token is revoked unused (DefaultJoinTimeout when zero).
	JoinTimeout time.Duration
	// AccountCleanupTimeout bounds a Machine deletion's wait for its computer account's cleanup
	// (DefaultAccountCleanupTimeout when zero).
	AccountCleanupTimeout time.Duration
	// DirectoryTimeout bounds each LDAP dial and request (directory.DefaultTimeout when zero).
	DirectoryTimeout time.Duration
	// Now is the clock; nil means time.Now (tests set it).
	Now func() time.Time
}

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.SecretCachingClient == nil || r.ClusterCache == nil {
		return fmt.Errorf("windowsconfig: Client, SecretCachingClient and ClusterCache are required")
	}
	if r.TokenTTL <= 0 {
		r.TokenTTL = DefaultTokenTTL
	}
	if r.JoinTimeout <= 0 {
		r.JoinTimeout = DefaultJoinTimeout
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("windowsconfig-controller")
	}
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "windowsconfig")
	return capicontrollerutil.NewControllerManagedBy(mgr, log).
		For(&bootstrapv1.WindowsConfig{}, builder.WithPredicates(owner.OwnedOrDeleting)).
		WithOptions(options).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToConfig), machineChanges).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToConfigs),
			predicates.Any(mgr.GetScheme(), log,
				predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log),
				predicates.ClusterControlPlaneInitialized(mgr.GetScheme(), log)),
			predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		WatchesRawSource(r.ClusterCache.GetClusterSource("windowsconfig", r.clusterToConfigs)).
		Complete(ctx, r)
}

// scope carries one reconcile's objects.
type scope struct {
	Config  *bootstrapv1.WindowsConfig
	Machine *clusterv1.Machine
	Cluster *clusterv1.Cluster
	// Rejected is why the admission webhook would reject the config (nil when it would not).
	Rejected error
}

// admitConfig is the WindowsConfig webhook's create path: defaults, then validation.
var admitConfig = admit.Webhook[*bootstrapv1.WindowsConfig](&webhooks.WindowsConfig{}, &webhooks.WindowsConfig{})

// Reconcile follows CAPI's order: object -> owner -> cluster -> patch helper -> paused -> work,
// with the summary condition and the patch deferred.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	log := ctrl.LoggerFrom(ctx)
	cfg := &bootstrapv1.WindowsConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !manager.InShard(cfg, r.WatchFilterValue) {
		return ctrl.Result{}, nil // another shard's (see manager.InShard)
	}
	// Before the patch helper is made, so webhook defaults are used but never written.
	rejected := admitConfig(ctx, cfg)
	machine, err := r.ownerMachine(ctx, cfg)
	if err != nil || machine == nil {
		return ctrl.Result{}, errors.Join(err, r.releaseOrphan(ctx, cfg, machine == nil && err == nil))
	}
	log = log.WithValues("Machine", klog.KObj(machine), "Cluster", klog.KRef(machine.Namespace, machine.Spec.ClusterName))
	ctx = ctrl.LoggerInto(ctx, log)

	cluster, err := util.GetClusterByName(ctx, r.Client, machine.Namespace, machine.Spec.ClusterName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Cluster does not exist yet, waiting")
			return ctrl.Result{}, r.releaseOrphan(ctx, cfg, true)
		}
		return ctrl.Result{}, err
	}

	helper, err := patch.NewHelper(cfg, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A Paused condition written just now (the config's first reconcile) does not need a reconcile
	// of its own: the work goes on in this one, which saves a wait for CAPI's per-object rate
	// limit on every new machine's path (the patch below carries the condition too).
	if isPaused, _, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, cfg); err != nil || isPaused {
		return ctrl.Result{}, err
	}
	defer func() {
		if err := r.patch(ctx, helper, cfg, rerr == nil); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, err})
		}
	}()

	s := &scope{Config: cfg, Machine: machine, Cluster: cluster, Rejected: rejected}
	if !cfg.DeletionTimestamp.IsZero() {
		// The data Secret is owned by the config and garbage-collected with it.
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

func (r *Reconciler) patch(ctx context.Context, helper *patch.Helper, cfg *bootstrapv1.WindowsConfig, success bool) error {
	if err := conditions.SetSummaryCondition(cfg, cfg, bootstrapv1.ReadyCondition,
		conditions.ForConditionTypes{bootstrapv1.DataSecretAvailableCondition}); err != nil {
		return err
	}
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{
		clusterv1.PausedCondition, bootstrapv1.ReadyCondition, bootstrapv1.DataSecretAvailableCondition,
		bootstrapv1.ComputerAccountReadyCondition,
	}}}
	if success {
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	return helper.Patch(ctx, cfg, opts...)
}

func setDataSecretCondition(cfg *bootstrapv1.WindowsConfig, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(cfg, metav1.Condition{
		Type: bootstrapv1.DataSecretAvailableCondition, Status: status, Reason: reason, Message: msg,
	})
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
