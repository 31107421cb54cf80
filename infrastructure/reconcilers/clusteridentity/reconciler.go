// Package clusteridentity reconciles VCenterClusterIdentities and HyperVClusterIdentities: the
// identity takes its Secret in the manager's namespace as its own and says whether it is Ready.
package clusteridentity

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcenterclusteridentities/status;hypervclusteridentities/status,verbs=patch

// recheck is how often an identity's Secret is looked at again: Secrets are read live, not
// watched, so a Secret created or changed later is seen within this time.
const recheck = time.Minute

// Reconciler reconciles the cluster identities of one kind.
type Reconciler struct {
	Client client.Client
	// Namespace is the manager's namespace, where the identities' Secrets live.
	Namespace string
	// NewObject returns an empty identity of the kind (VCenterClusterIdentity or HyperVClusterIdentity).
	NewObject func() client.Object
	// WatchFilterValue is the manager's shard: see InShard.
	WatchFilterValue string
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).For(r.NewObject(), builder.WithPredicates(InShard(r.WatchFilterValue))).
		WithOptions(options).Complete(r)
}

// InShard selects the identities a manager of the watch filter keeps: an identity labelled
// cluster.x-k8s.io/watch-filter belongs to the shard of that value; an identity without the
// label is shared by the clusters of every shard, so every manager keeps it (the work is the
// same in each: own the Secret, say whether it holds a login). A manager without a filter keeps
// every identity.
func InShard(watchFilter string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		v, labelled := o.GetLabels()[clusterv1.WatchLabel]
		return watchFilter == "" || !labelled || v == watchFilter
	})
}

// Reconcile makes the identity an owner of its Secret and sets Ready.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	obj := r.NewObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec, status, setter := parts(obj)
	helper, err := patch.NewHelper(obj, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		status.ObservedGeneration = obj.GetGeneration()
		if err := helper.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: []string{infrav1.ReadyCondition}}); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, err})
		}
	}()
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil // the Secret is garbage collected with its owner
	}
	key := client.ObjectKey{Namespace: r.Namespace, Name: spec.SecretName}
	if err := credentials.Own(ctx, r.Client, obj, key); err != nil {
		return ctrl.Result{}, err
	}
	reason, msg := r.check(ctx, obj, key)
	if reason == "" {
		reason, msg = endpoints(obj)
	}
	if sel := spec.AllowedNamespaces.Selector; reason == "" && sel != nil {
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			reason, msg = infrav1.InvalidSpecReason, "spec.allowedNamespaces.selector: "+err.Error()
		}
	}
	status.Ready = reason == ""
	if !status.Ready {
		conditions.Set(setter, metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionFalse, Reason: reason, Message: msg})
		return ctrl.Result{RequeueAfter: recheck}, nil
	}
	conditions.Set(setter, metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: clusterv1.ReadyReason,
		Message: "Secret " + key.String() + " holds the login"})
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// check returns why the identity's Secret cannot serve as its login ("" when it can).
func (r *Reconciler) check(ctx context.Context, obj client.Object, key client.ObjectKey) (string, string) {
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, key, secret); err != nil {
		return infrav1.CredentialsNotFoundReason, "Secret " + key.String() + ": " + err.Error()
	}
	if err := credentials.CheckHolder(secret, obj); err != nil {
		return infrav1.CredentialsInUseReason, err.Error()
	}
	if err := credentials.CheckLogin(secret); err != nil {
		return infrav1.SecretNotALoginReason, err.Error()
	}
	if len(secret.Data["username"]) == 0 || len(secret.Data["password"]) == 0 {
		return infrav1.CredentialsNotFoundReason, "Secret " + key.String() + " needs the keys username and password"
	}
	return "", ""
}

// parts returns the spec and status of an identity of either kind.
func parts(obj client.Object) (*infrav1.ClusterIdentitySpec, *infrav1.ClusterIdentityStatus, conditions.Setter) {
	switch o := obj.(type) {
	case *infrav1.VCenterClusterIdentity:
		return &o.Spec.ClusterIdentitySpec, &o.Status, o
	case *infrav1.HyperVClusterIdentity:
		return &o.Spec.ClusterIdentitySpec, &o.Status, o
	}
	panic("clusteridentity: not an identity kind")
}

// endpoints returns why an identity lends its login nowhere, or names an endpoint it cannot
// match ("" when its endpoints are usable).
func endpoints(obj client.Object) (string, string) {
	switch o := obj.(type) {
	case *infrav1.VCenterClusterIdentity:
		if len(o.Spec.Servers) == 0 {
			return infrav1.EndpointNotLentReason, "spec.servers is empty: the identity lends its login to no vCenter; list the vCenters it may be sent to, each with its thumbprint or CA bundle"
		}
	case *infrav1.HyperVClusterIdentity:
		if len(o.Spec.Hosts) == 0 {
			return infrav1.EndpointNotLentReason, "spec.hosts is empty: the identity lends its login to no Hyper-V host; list the addresses it may be sent to"
		}
		for i, e := range o.Spec.Hosts {
			for j, a := range e.Addresses {
				if p := lend.AddressProblem(a); p != "" {
					return infrav1.InvalidSpecReason, fmt.Sprintf("spec.hosts[%d].addresses[%d]: %s", i, j, p)
				}
			}
		}
	}
	return "", ""
}
