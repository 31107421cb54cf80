// Package clusterbase is what the VCenterCluster and HyperVCluster reconcilers share: the CAPI
// steps around their hypervisor check (owner Cluster, pause, patch with a summary Ready condition)
// and the watches that wake them.
package clusterbase

import (
	"context"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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
	"github.com/capwin/capwin/internal/admit"
	"github.com/capwin/capwin/internal/manager"
)

// Object is an infrastructure cluster of either kind.
type Object interface {
	client.Object
	conditions.Setter
}

// Admission is the cluster kind's admission webhook, run by Reconcile before the hypervisor check.
type Admission struct {
	// Check is the webhook's create path; nil admits everything.
	Check admit.Check
	// Recorder gets an event for each refusal; nil records none.
	Recorder events.EventRecorder
}

// Reconcile reads the object, skips it when it belongs to another shard or while its Cluster is paused or it is being deleted,
// refuses it when its admission webhook would (HypervisorAvailable False, InvalidSpec), runs
// check, and patches the object with Ready summarising HypervisorAvailable. gone is called when
// the object no longer exists, so the provider closes the connections only it used.
func Reconcile(ctx context.Context, c client.Client, key client.ObjectKey, obj Object, watchFilter string, adm Admission,
	check func(ctx context.Context) (ctrl.Result, error), gone func(client.ObjectKey)) (_ ctrl.Result, rerr error) {
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			gone(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !manager.InShard(obj, watchFilter) {
		return ctrl.Result{}, nil // another shard's (see manager.InShard)
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
	if adm.Check != nil {
		if err := adm.Check(ctx, obj); err != nil {
			admit.Refuse(obj, infrav1.HypervisorAvailableCondition, err, adm.Recorder)
			return ctrl.Result{RequeueAfter: admit.Recheck}, nil
		}
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

// Setup registers a cluster reconciler for obj's kind: filtered by the watch label, and woken
// when its Cluster is created unpaused or is paused or unpaused (clusterEvents), and when a
// cluster identity of kind identity changes (identityUsers lists the clusters to look at again).
func Setup(ctx context.Context, mgr ctrl.Manager, name string, obj Object, watchFilter string, options controller.Options, r reconcile.Reconciler,
	identity client.Object, identityUsers handler.MapFunc) error {
	log := ctrl.LoggerFrom(ctx).WithValues("controller", name)
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return err
	}
	// The filter applies to the cluster objects and Clusters; identities are shared and carry no
	// watch label (identityUsers enqueues only this manager's clusters).
	filter := predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, watchFilter)
	return capicontrollerutil.NewControllerManagedBy(mgr, log).
		For(obj, builder.WithPredicates(filter)).
		WithOptions(options).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, gvk, mgr.GetClient(), obj)),
			filter, clusterEvents(mgr.GetScheme(), log)).
		Watches(identity, handler.EnqueueRequestsFromMapFunc(identityUsers)).
		Complete(ctx, r)
}

// IdentityUsers returns the requests of the clusters in list (of this manager's watch filter)
// that name the identity, by uses.
func IdentityUsers(c client.Client, list client.ObjectList, watchFilter string, uses func(cluster client.Object, identity string) bool) handler.MapFunc {
	return func(ctx context.Context, identity client.Object) []reconcile.Request {
		var opts []client.ListOption
		if watchFilter != "" {
			opts = append(opts, client.MatchingLabels{clusterv1.WatchLabel: watchFilter})
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list the clusters of an identity")
			return nil
		}
		var out []reconcile.Request
		_ = meta.EachListItem(l, func(o runtime.Object) error {
			if cl, ok := o.(client.Object); ok && uses(cl, identity.GetName()) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cl)})
			}
			return nil
		})
		return out
	}
}

// clusterEvents are the Cluster events an infrastructure cluster is reconciled for: the Cluster
// created unpaused or unpaused (work resumes), and paused, so the Paused condition says True
// while e.g. clusterctl move holds the Cluster (without it, it stayed False until the next
// periodic check).
func clusterEvents(scheme *runtime.Scheme, log logr.Logger) predicate.Funcs {
	return predicates.Any(scheme, log, predicates.ClusterUnpaused(scheme, log), predicates.ClusterPausedTransitions(scheme, log))
}
