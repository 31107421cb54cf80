// Package clusterbase is what the VCenterCluster and HyperVCluster reconcilers share: the CAPI
// steps around their hypervisor check (owner Cluster, pause, patch with a summary Ready condition)
// and owning the credential Secrets so clusterctl move takes them along.
package clusterbase

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
)

// Object is an infrastructure cluster of either kind.
type Object interface {
	client.Object
	conditions.Setter
}

// Reconcile reads the object, skips it while its Cluster is paused or it is being deleted, runs
// check, and patches the object with Ready summarising HypervisorAvailable.
func Reconcile(ctx context.Context, c client.Client, key client.ObjectKey, obj Object,
	check func(ctx context.Context) (ctrl.Result, error)) (_ ctrl.Result, rerr error) {
	if err := c.Get(ctx, key, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := util.GetOwnerCluster(ctx, c, metav1.ObjectMeta{Namespace: obj.GetNamespace(), OwnerReferences: obj.GetOwnerReferences()})
	if err != nil || cluster == nil {
		return ctrl.Result{}, err
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Cluster", klog.KObj(cluster)))
	helper, err := patch.NewHelper(obj, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, c, cluster, obj); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}
	defer func() {
		if err := patchObject(ctx, helper, obj, rerr == nil); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, err})
		}
	}()
	if !obj.GetDeletionTimestamp().IsZero() {
		// VMs belong to machines and are deleted with them; nothing on the hypervisor is per cluster.
		return ctrl.Result{}, nil
	}
	return check(ctx)
}

func patchObject(ctx context.Context, helper *patch.Helper, obj Object, success bool) error {
	if err := conditions.SetSummaryCondition(obj, obj, infrav1.ReadyCondition,
		conditions.ForConditionTypes{infrav1.HypervisorAvailableCondition}); err != nil {
		return err
	}
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{
		clusterv1.PausedCondition, infrav1.ReadyCondition, infrav1.HypervisorAvailableCondition,
	}}}
	if success {
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	return helper.Patch(ctx, obj, opts...)
}

// delete: OwnerReferencesPermissionEnforcement (CAPI's kind e2e, OpenShift) admits an ownerReferences change only from who may delete the object.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;patch;delete

// OwnSecret makes owner an owner of a Secret in its namespace. A missing Secret, or one that
// already belongs to another cluster or identity, is reported by the hypervisor check, not here;
// the latter gains no owner. The patch is optimistic, so of two objects claiming one Secret at
// once, one wins.
func OwnSecret(ctx context.Context, c client.Client, owner client.Object, name string) error {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if credentials.HeldByOther(secret, owner) {
		return nil
	}
	before := secret.DeepCopy()
	if err := controllerutil.SetOwnerReference(owner, secret, c.Scheme()); err != nil {
		return err
	}
	if len(before.OwnerReferences) == len(secret.OwnerReferences) {
		return nil
	}
	if err := c.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("own Secret %s: %w", secret.Name, err)
	}
	return nil
}

// Setup registers a cluster reconciler for obj's kind: filtered by the watch label, and woken
// when its Cluster is created unpaused or is paused or unpaused (clusterEvents).
func Setup(ctx context.Context, mgr ctrl.Manager, name string, obj Object, watchFilter string, options controller.Options, r reconcile.Reconciler) error {
	log := ctrl.LoggerFrom(ctx).WithValues("controller", name)
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return err
	}
	return capicontrollerutil.NewControllerManagedBy(mgr, log).
		For(obj).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, watchFilter)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, gvk, mgr.GetClient(), obj)),
			clusterEvents(mgr.GetScheme(), log)).
		Complete(ctx, r)
}

// clusterEvents are the Cluster events an infrastructure cluster is reconciled for: the Cluster
// created unpaused or unpaused (work resumes), and paused, so the Paused condition says True
// while e.g. clusterctl move holds the Cluster (without it, it stayed False until the next
// periodic check).
func clusterEvents(scheme *runtime.Scheme, log logr.Logger) predicate.Funcs {
	return predicates.Any(scheme, log, predicates.ClusterUnpaused(scheme, log), predicates.ClusterPausedTransitions(scheme, log))
}
