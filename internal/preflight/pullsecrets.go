package preflight

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dockerAuths reads the registry credentials of a pull Secret.
func dockerAuths(s *corev1.Secret) (map[string]authn.AuthConfig, error) {
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		var cfg struct {
			Auths map[string]authn.AuthConfig `json:"auths"`
		}
		if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", corev1.DockerConfigJsonKey, err)
		}
		return cfg.Auths, nil
	case corev1.SecretTypeDockercfg:
		var auths map[string]authn.AuthConfig
		if err := json.Unmarshal(s.Data[corev1.DockerConfigKey], &auths); err != nil {
			return nil, fmt.Errorf("%s: %w", corev1.DockerConfigKey, err)
		}
		return auths, nil
	}
	return nil, nil
}

// pullSecrets reads the pull Secrets a Pod of the template gets: the template's imagePullSecrets
// and those of its ServiceAccount. Missing ones are skipped, as kubelet does.
func pullSecrets(ctx context.Context, c client.Reader, w Workload) ([]corev1.Secret, error) {
	names := map[string]bool{}
	var order []string
	for _, r := range w.Template.Spec.ImagePullSecrets {
		if r.Name != "" && !names[r.Name] {
			names[r.Name] = true
			order = append(order, r.Name)
		}
	}
	sa := w.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	var account corev1.ServiceAccount
	switch err := c.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: sa}, &account); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("ServiceAccount %s/%s: %w", w.Namespace, sa, err)
	}
	for _, r := range account.ImagePullSecrets {
		if r.Name != "" && !names[r.Name] {
			names[r.Name] = true
			order = append(order, r.Name)
		}
	}
	var out []corev1.Secret
	for _, n := range order {
		var s corev1.Secret
		switch err := c.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: n}, &s); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("pull Secret %s/%s: %w", w.Namespace, n, err)
		}
		out = append(out, s)
	}
	return out, nil
}
