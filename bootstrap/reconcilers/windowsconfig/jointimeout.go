package windowsconfig

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// DefaultJoinTimeout is how long after its first token a Machine may take to get a Node. Past
// it the token is revoked and never refreshed or re-issued: a VM that never joins must not keep a
// valid join credential. It is longer than the templates' MachineHealthCheck nodeStartupTimeout
// (30m), so remediation normally replaces such a Machine first.
const DefaultJoinTimeout = time.Hour

// joinDeadline is when the Machine of a data Secret must have its Node: the join timeout after
// the Secret (and so its first token) was created. A Secret not written yet starts now.
func (r *Reconciler) joinDeadline(ds *corev1.Secret) time.Time {
	if ds == nil || ds.CreationTimestamp.IsZero() {
		return r.now().Add(r.JoinTimeout)
	}
	return ds.CreationTimestamp.Add(r.JoinTimeout)
}

// tokenExpiry is the expiration of a token issued or refreshed now: one TTL, but never past the
// join deadline, so the token also dies on time while this manager is down.
func (r *Reconciler) tokenExpiry(deadline time.Time) time.Time {
	if exp := r.now().Add(r.TokenTTL); exp.Before(deadline) {
		return exp
	}
	return deadline
}

// recheckAfter is when a config with a live token is looked at again: often enough to refresh it
// (a third of the TTL, two chances before it expires) and at its join deadline.
func (r *Reconciler) recheckAfter(deadline time.Time) time.Duration {
	return max(min(r.TokenTTL/3, deadline.Sub(r.now())), time.Second)
}

// expireToken revokes the token of a Machine that got no Node within the join timeout. The
// config keeps its data Secret (the Machine's contract) but says the data can no longer join.
func (r *Reconciler) expireToken(ctx context.Context, s *scope, remote client.Client, ds *corev1.Secret, id string) error {
	if err := r.deleteToken(ctx, remote, ds, id, tokenRevokedAnnotation, tokenExpiredAnnotation); err != nil {
		return err
	}
	setTokenExpiredCondition(s.Config, r.JoinTimeout)
	ctrl.LoggerFrom(ctx).Info("Machine has no Node within the join timeout; bootstrap token revoked", "tokenID", id, "joinTimeout", r.JoinTimeout)
	r.Recorder.Eventf(s.Config, s.Machine, corev1.EventTypeWarning, bootstrapv1.BootstrapTokenExpiredReason, "RevokeToken",
		"Machine has no Node %s after its bootstrap token was issued; token %s revoked unused", r.JoinTimeout, id)
	return nil
}

func setTokenExpiredCondition(cfg *bootstrapv1.WindowsConfig, joinTimeout time.Duration) {
	setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.BootstrapTokenExpiredReason, fmt.Sprintf(
		"The Machine got no Node within %s (--bootstrap-join-timeout) of its first bootstrap token; the token "+
			"is revoked, so this bootstrap data can no longer join a node. Replace the Machine: a "+
			"MachineHealthCheck's nodeStartupTimeout does so, or delete it.", joinTimeout))
}
