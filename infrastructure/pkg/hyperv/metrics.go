package hyperv

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// WinRM operations (one PowerShell operation script on a host) by operation and outcome,
// exported on the manager's /metrics.
var (
	operationsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capwin_winrm_operations_total",
		Help: "Hyper-V host operations run over WinRM, by operation script and outcome (ok, or the error kind: Unreachable, AuthFailed, NotFound ...).",
	}, []string{"operation", "outcome"})
	operationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "capwin_winrm_operation_duration_seconds",
		Help:    "Duration of Hyper-V host operations over WinRM (from the request to the decoded result), by operation script.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}, []string{"operation"})
	roundTrips = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "capwin_winrm_round_trips_total",
		Help: "WinRM HTTP requests sent to Hyper-V hosts (an operation takes several: create shell, command, receive, delete shell).",
	})
)

func init() { metrics.Registry.MustRegister(operationsTotal, operationSeconds, roundTrips) }

// observeOperation records one finished operation.
func observeOperation(op string, err error, d time.Duration) {
	operationsTotal.WithLabelValues(op, outcome(err)).Inc()
	operationSeconds.WithLabelValues(op).Observe(d.Seconds())
}

// outcome is an operation's outcome label: ok, or its error kind from the fixed set (a kind
// the host script made up counts as Failed, so the label stays bounded).
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	switch k := KindOf(err); k {
	case wire.KindNotFound, wire.KindInvalidSpec, wire.KindDiskFull, wire.KindAccessDenied, wire.KindGuestUnavailable, wire.KindGuestFailed,
		wire.KindUnreachable, wire.KindAuth, wire.KindTLS, wire.KindCredentials:
		return k
	}
	return wire.KindFailed
}
