package vcenter

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmware/govmomi/vim25/soap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// callsTotal counts vSphere API calls by method and outcome, exported on the manager's /metrics.
var callsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "capwin_vcenter_calls_total",
	Help: "vSphere API calls made by capwin, by method and outcome (ok, fault).",
}, []string{"method", "outcome"})

func init() { metrics.Registry.MustRegister(callsTotal) }

// Method names the vSphere method of a SOAP request body (types are named <Method>Body).
func Method(req soap.HasFault) string {
	t := reflect.TypeOf(req)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.TrimSuffix(t.Name(), "Body")
}

// Calls counts calls per method; it is safe for concurrent use.
type Calls struct {
	mu sync.Mutex
	n  map[string]int
}

// Wrap returns a round tripper that counts into c and into the Prometheus counter.
func (c *Calls) Wrap(next soap.RoundTripper) soap.RoundTripper {
	return countingRoundTripper{next: next, calls: c}
}

// Snapshot returns the counts so far, by method.
func (c *Calls) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// Total is the number of calls so far.
func (c *Calls) Total() int {
	n := 0
	for _, v := range c.Snapshot() {
		n += v
	}
	return n
}

// Methods lists the methods seen, sorted by count (descending) then name.
func (c *Calls) Methods() []string {
	snap := c.Snapshot()
	names := make([]string, 0, len(snap))
	for k := range snap {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if snap[names[i]] != snap[names[j]] {
			return snap[names[i]] > snap[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

type countingRoundTripper struct {
	next  soap.RoundTripper
	calls *Calls
}

func (r countingRoundTripper) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	m := Method(req)
	err := r.next.RoundTrip(ctx, req, res)
	outcome := "ok"
	if err != nil || res.Fault() != nil {
		outcome = "fault"
	}
	callsTotal.WithLabelValues(m, outcome).Inc()
	if r.calls != nil {
		r.calls.mu.Lock()
		if r.calls.n == nil {
			r.calls.n = map[string]int{}
		}
		r.calls.n[m]++
		r.calls.mu.Unlock()
	}
	return err
}
