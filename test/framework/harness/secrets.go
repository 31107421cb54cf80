package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/capwin/capwin/test/framework/secretscan"
)

// randomPassword is a credential no code can know in advance (vcsim's default is "pass").
func randomPassword(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// watchSecrets records, from Start on, the hypervisor's credentials, every credential of the
// management cluster's Secrets and the workload cluster's bootstrap tokens (h.Secrets).
func (h *Harness) watchSecrets(ctx context.Context) error {
	h.Secrets = secretscan.New()
	if h.VSphere != nil {
		pw, _ := h.VSphere.Server.URL.User.Password()
		h.Secrets.Add("vCenter password (vcsim)", pw)
	}
	if len(h.HyperV) > 0 {
		h.Secrets.Add("Hyper-V hosts' password", HostPassword)
	}
	if err := h.Secrets.Watch(ctx, h.Management.Env.Config, metav1.NamespaceAll); err != nil {
		return fmt.Errorf("management cluster: %w", err)
	}
	if err := h.Secrets.Watch(ctx, h.Workload.Config, metav1.NamespaceSystem); err != nil {
		return fmt.Errorf("workload cluster: %w", err)
	}
	return nil
}

// ScanSecrets looks for every credential the run used (h.Secrets) in the given log files and
// directories (the managers' logs, at the verbosity the run used), in the management cluster's
// Events and in the status, conditions and annotations of Cluster API's and capwin's objects, and
// in the managers' metrics (controller-runtime's registry, which their endpoints serve). It
// returns what was searched for; the error names every hit (a hit never shows the value), or
// says that no bootstrap token was collected, which would make the scan prove little.
func (h *Harness) ScanSecrets(ctx context.Context, logs ...string) ([]string, error) {
	names := h.Secrets.Names()
	if err := h.Secrets.CheckCollected(); err != nil {
		return names, err
	}
	var hits []secretscan.Hit
	var errs []error
	if len(logs) > 0 {
		found, _, err := h.Secrets.Files(logs...)
		hits, errs = append(hits, found...), append(errs, err)
	}
	found, err := h.Secrets.Cluster(ctx, h.Management.Env.Config)
	hits, errs = append(hits, found...), append(errs, err)
	found, err = h.Secrets.Metrics("the managers' metrics", metrics.Registry)
	hits, errs = append(hits, found...), append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return names, fmt.Errorf("secret scan: %w", err)
	}
	return names, secretscan.Verdict(hits)
}
