// Package vcentercluster reconciles VCenterClusters: it checks that vCenter accepts the
// identity and has the datacenter and failure domains, and reports them to CAPI.
package vcentercluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcenterclusters;vcenterclusters/status;vcenterclusters/finalizers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;update;patch

// recheck is how often a healthy VCenterCluster is checked again (vCenter reachable, credentials
// still valid), so the condition tells the truth without an object change.
const recheck = 5 * time.Minute

// Reconciler reconciles VCenterClusters.
type Reconciler struct {
	Client           client.Client
	Provider         *vcenter.Provider
	WatchFilterValue string
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "vcentercluster")
	gvk := infrav1.GroupVersion.WithKind("VCenterCluster")
	return capicontrollerutil.NewControllerManagedBy(mgr, log).
		For(&infrav1.VCenterCluster{}).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, gvk, mgr.GetClient(), &infrav1.VCenterCluster{})),
			predicates.ClusterUnpaused(mgr.GetScheme(), log)).
		Complete(ctx, r)
}

// Reconcile checks vCenter and reports the cluster's infrastructure as provisioned.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	vc := &infrav1.VCenterCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, vc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, vc.ObjectMeta)
	if err != nil || cluster == nil {
		return ctrl.Result{}, err
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Cluster", klog.KObj(cluster)))
	helper, err := patch.NewHelper(vc, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, vc); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}
	defer func() {
		if err := r.patch(ctx, helper, vc, rerr == nil); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, err})
		}
	}()
	if !vc.DeletionTimestamp.IsZero() {
		// VMs belong to machines and are deleted with them; nothing in vCenter is per cluster.
		return ctrl.Result{}, nil
	}
	if err := r.ownIdentity(ctx, vc); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Provider.CheckCluster(ctx, vc); err != nil {
		conditions.Set(vc, metav1.Condition{Type: infrav1.HypervisorAvailableCondition, Status: metav1.ConditionFalse,
			Reason: vcenter.Reason(err), Message: err.Error()})
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	conditions.Set(vc, metav1.Condition{Type: infrav1.HypervisorAvailableCondition, Status: metav1.ConditionTrue, Reason: infrav1.HypervisorAvailableReason})
	vc.Status.FailureDomains = nil
	for _, fd := range vc.Spec.FailureDomains {
		vc.Status.FailureDomains = append(vc.Status.FailureDomains, clusterv1.FailureDomain{Name: fd.Name, ControlPlane: fd.ControlPlane})
	}
	vc.Status.Initialization.Provisioned = ptr.To(true)
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// ownIdentity makes the VCenterCluster an owner of its identity Secret, so clusterctl move takes
// the Secret along with the cluster.
func (r *Reconciler) ownIdentity(ctx context.Context, vc *infrav1.VCenterCluster) error {
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: vc.Namespace, Name: vc.Spec.IdentityRef.Name}, secret); err != nil {
		return client.IgnoreNotFound(err) // reported by CheckCluster
	}
	before := secret.DeepCopy()
	if err := controllerutil.SetOwnerReference(vc, secret, r.Client.Scheme()); err != nil {
		return err
	}
	if len(before.OwnerReferences) == len(secret.OwnerReferences) {
		return nil
	}
	if err := r.Client.Patch(ctx, secret, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("own identity Secret %s: %w", secret.Name, err)
	}
	return nil
}

func (r *Reconciler) patch(ctx context.Context, helper *patch.Helper, vc *infrav1.VCenterCluster, success bool) error {
	if err := conditions.SetSummaryCondition(vc, vc, infrav1.ReadyCondition,
		conditions.ForConditionTypes{infrav1.HypervisorAvailableCondition}); err != nil {
		return err
	}
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{
		clusterv1.PausedCondition, infrav1.ReadyCondition, infrav1.HypervisorAvailableCondition,
	}}}
	if success {
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	return helper.Patch(ctx, vc, opts...)
}
