package session

import (
	"context"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmware/govmomi/vim25/soap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// callsTotal counts vSphere API calls by method and outcome, exported on the manager's /metrics.
var callsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "capwin_vcenter_calls_total",
	Help: "vSphere API calls made by capwin, by method and outcome (ok, fault).",
}, []string{"method", "outcome"})

// connectionsOpened counts the TLS connections opened to vCenter: with enough idle connections
// kept (Sessions.MaxIdleConnsPerHost) it grows only with the sessions, not with the calls.
var connectionsOpened = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "capwin_vcenter_connections_opened_total",
	Help: "TLS connections capwin opened to vCenter servers.",
})

func init() { metrics.Registry.MustRegister(callsTotal, connectionsOpened) }

// Method names the vSphere method of a SOAP request body (types are named <Method>Body).
func Method(req soap.HasFault) string {
	t := reflect.TypeOf(req)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.TrimSuffix(t.Name(), "Body")
}

// metricsRoundTripper counts every call into callsTotal.
type metricsRoundTripper struct {
	next soap.RoundTripper
}

func (r metricsRoundTripper) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	err := r.next.RoundTrip(ctx, req, res)
	outcome := "ok"
	if err != nil || res.Fault() != nil {
		outcome = "fault"
	}
	callsTotal.WithLabelValues(Method(req), outcome).Inc()
	return err
}
