package windowsconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// tokenIDAnnotation records which bootstrap token the data Secret carries, so the token can be
// refreshed while the node has not joined. Only the public token ID is stored here.
const tokenIDAnnotation = "bootstrap.cluster.x-k8s.io/windows-token-id" //nolint:gosec // G101: an annotation name, not a credential

// tokenRevokedAnnotation records when the token was deleted (the node joined, or it expired unused).
const tokenRevokedAnnotation = "bootstrap.cluster.x-k8s.io/windows-token-revoked" //nolint:gosec // G101: an annotation name, not a credential

// tokenExpiredAnnotation records when the token was revoked because the Machine had no Node
// within the join timeout; such a config never gets a new token.
const tokenExpiredAnnotation = "bootstrap.cluster.x-k8s.io/windows-token-expired-unused" //nolint:gosec // G101: an annotation name, not a credential

// storeDataSecret creates or updates the bootstrap data Secret (keys "value" and "format", the
// CAPI contract). A Secret of the same name that the config does not control is never overwritten.
func (r *Reconciler) storeDataSecret(ctx context.Context, s *scope, data []byte, format, token string) error {
	id, _, err := splitToken(token)
	if err != nil {
		return err
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.Config.Name,
			Namespace:       s.Config.Namespace,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: s.Cluster.Name},
			Annotations:     map[string]string{tokenIDAnnotation: id},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s.Config, bootstrapv1.GroupVersion.WithKind("WindowsConfig"))},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": data, "format": []byte(format)},
	}
	err = r.Client.Create(ctx, want)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	have := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), have); err != nil {
		return err
	}
	if !metav1.IsControlledBy(have, s.Config) {
		return fmt.Errorf("secret %s exists and is not controlled by this WindowsConfig; refusing to overwrite it", have.Name)
	}
	have.Labels, have.Annotations, have.Data = want.Labels, want.Annotations, want.Data
	return r.Client.Update(ctx, have)
}

// resolveFiles returns the content of each spec.files entry, reading contentFrom Secrets from the
// config's namespace. The result is index-aligned with spec.files.
func (r *Reconciler) resolveFiles(ctx context.Context, cfg *bootstrapv1.WindowsConfig) ([]string, error) {
	out := make([]string, len(cfg.Spec.Files))
	for i, f := range cfg.Spec.Files {
		if f.ContentFrom == nil {
			continue
		}
		ref := f.ContentFrom.Secret
		v, err := r.secretKey(ctx, cfg.Namespace, ref.Name, ref.Key)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Path, err)
		}
		out[i] = string(v)
	}
	return out, nil
}
