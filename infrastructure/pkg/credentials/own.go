package credentials

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/capwin/capwin/internal/loginsecret"
)

// delete: OwnerReferencesPermissionEnforcement (CAPI's kind e2e, OpenShift) admits an ownerReferences change only from who may delete the object.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;patch;delete

// Own makes owner (a cluster, or a cluster identity) an owner of the Secret key, so clusterctl
// move takes the Secret along and deleting the owner deletes it, and labels it Label, so the
// manager reads it from its cache. A missing Secret, one that already belongs to another capwin
// object, and one that is no login (loginsecret.Problem: a TLS key, a token, another
// controller's) are left alone: reading it reports that. The patch is
// optimistic, so of two objects claiming one Secret at once, one wins.
func Own(ctx context.Context, c client.Client, owner client.Object, key client.ObjectKey) error {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if HeldByOther(secret, owner) || loginsecret.Problem(secret) != "" {
		return nil // reading it says why it cannot be used
	}
	before := secret.DeepCopy()
	if err := controllerutil.SetOwnerReference(owner, secret, c.Scheme()); err != nil {
		return fmt.Errorf("own Secret %s: %w", key, err)
	}
	if _, labelled := secret.Labels[Label]; !labelled {
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[Label] = ""
	} else if len(before.OwnerReferences) == len(secret.OwnerReferences) {
		return nil
	}
	if err := c.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("own Secret %s: %w", key, err)
	}
	return nil
}
