package windowsconfig

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Token operations in the workload clusters.
const (
	tokenIssue   = "issue"
	tokenRefresh = "refresh"
	tokenRevoke  = "revoke"
)

// tokensTotal counts bootstrap token operations, exported on the manager's /metrics.
var tokensTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "capwin_bootstrap_tokens_total",
	Help: "Bootstrap tokens issued, refreshed (expiry extended) and revoked in workload clusters, by operation.",
}, []string{"operation"})

func init() {
	metrics.Registry.MustRegister(tokensTotal)
	for _, op := range []string{tokenIssue, tokenRefresh, tokenRevoke} {
		tokensTotal.WithLabelValues(op) // export zeros from the start
	}
}
