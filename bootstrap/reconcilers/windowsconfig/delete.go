package windowsconfig

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// tokenFinalizer holds a WindowsConfig that issued a bootstrap token until the token is
// revoked: a Machine deleted before its node joined (scale-down, remediation, a cluster delete)
// must not leave a valid join credential behind in the workload cluster.
const tokenFinalizer = "windowsconfig.bootstrap.cluster.x-k8s.io/revoke-token" //nolint:gosec // G101: a finalizer name, not a credential

// reconcileDelete revokes the config's token if it is still valid, then lets the config go.
// An unreachable workload cluster (e.g. its control plane is already gone) does not block the
// deletion: the token expires by itself there.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	cfg := s.Config
	setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.DeletingReason, "WindowsConfig is being deleted")
	if controllerutil.ContainsFinalizer(cfg, accountFinalizer) {
		if done, res := r.deleteAccount(ctx, s); !done {
			return res, nil
		}
		controllerutil.RemoveFinalizer(cfg, accountFinalizer)
	}
	if !controllerutil.ContainsFinalizer(cfg, tokenFinalizer) {
		return ctrl.Result{}, nil
	}
	ds, id, err := r.unrevokedToken(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if id != "" {
		remote, err := r.ClusterCache.GetClient(ctx, util.ObjectKey(s.Cluster))
		switch {
		case errors.Is(err, clustercache.ErrClusterNotConnected):
			ctrl.LoggerFrom(ctx).Info("Workload cluster not reachable; the bootstrap token is left to expire", "tokenID", id)
		case err != nil:
			return ctrl.Result{}, err
		default:
			if err := r.deleteToken(ctx, remote, ds, id, tokenRevokedAnnotation); err != nil {
				return ctrl.Result{}, err
			}
			ctrl.LoggerFrom(ctx).Info("WindowsConfig deleted; bootstrap token revoked", "tokenID", id)
		}
	}
	controllerutil.RemoveFinalizer(cfg, tokenFinalizer)
	return ctrl.Result{}, nil
}

// releaseOrphan removes the finalizers of a config being deleted without a Machine or Cluster
// (nothing left to reach the workload cluster through, and no Machine to act for: a Machine
// waits for its config's deletion, so this is a config deleted on its own, or force-removed
// owners). A computer account it recorded is named in a Warning event.
func (r *Reconciler) releaseOrphan(ctx context.Context, cfg *bootstrapv1.WindowsConfig, orphan bool) error {
	if !orphan || cfg.DeletionTimestamp.IsZero() ||
		(!controllerutil.ContainsFinalizer(cfg, tokenFinalizer) && !controllerutil.ContainsFinalizer(cfg, accountFinalizer)) {
		return nil
	}
	if st := cfg.Status.ActiveDirectory; controllerutil.ContainsFinalizer(cfg, accountFinalizer) && st != nil && st.ObjectGUID != "" {
		r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, bootstrapv1.ComputerAccountNotDeletedReason, "DeleteComputerAccount",
			"The config's Machine is gone: computer account %s (objectGUID %s) is left as it is", st.DistinguishedName, st.ObjectGUID)
	}
	before := cfg.DeepCopy()
	controllerutil.RemoveFinalizer(cfg, tokenFinalizer)
	controllerutil.RemoveFinalizer(cfg, accountFinalizer)
	return r.Client.Patch(ctx, cfg, client.MergeFrom(before))
}
