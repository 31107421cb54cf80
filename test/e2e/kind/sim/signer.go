//go:build e2e

package main

import (
	"context"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/test/framework/guestjoin"
)

// signClusterInfo is kube-controller-manager's bootstrap signer: cluster-info carries one
// detached JWS of its kubeconfig per valid signing token (kube-system bootstrap-token-<id>
// Secrets, as capwin's bootstrap provider creates them in the workload cluster).
func (s *sim) signClusterInfo(ctx context.Context, w *workload) error {
	c := s.mem.GetResourceGroup(w.name).GetClient()
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return errRetry // no control plane has come up yet
		}
		return err
	}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		return err
	}
	want := map[string]string{bootstrapapi.KubeConfigKey: cm.Data[bootstrapapi.KubeConfigKey]}
	for _, sec := range secrets.Items {
		if sec.Type != bootstrapapi.SecretTypeBootstrapToken || string(sec.Data[bootstrapapi.BootstrapTokenUsageSigningKey]) != "true" {
			continue
		}
		if exp := string(sec.Data[bootstrapapi.BootstrapTokenExpirationKey]); exp != "" {
			if t, err := time.Parse(time.RFC3339, exp); err != nil || time.Now().After(t) {
				continue
			}
		}
		id, secret := string(sec.Data[bootstrapapi.BootstrapTokenIDKey]), string(sec.Data[bootstrapapi.BootstrapTokenSecretKey])
		if sec.Name != bootstrapapi.BootstrapTokenSecretPrefix+id || id == "" || secret == "" {
			continue
		}
		want[bootstrapapi.JWSSignatureKeyPrefix+id] = guestjoin.SignDetachedJWS(want[bootstrapapi.KubeConfigKey], id, secret)
	}
	for k, v := range cm.Data {
		if !strings.HasPrefix(k, bootstrapapi.JWSSignatureKeyPrefix) && k != bootstrapapi.KubeConfigKey {
			want[k] = v
		}
	}
	if maps.Equal(want, cm.Data) {
		return nil
	}
	cm.Data = want
	return c.Update(ctx, cm)
}
