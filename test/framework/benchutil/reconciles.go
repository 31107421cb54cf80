package benchutil

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconciles reads a controller's reconciles so far and their summed time from
// controller-runtime's metrics (controller_runtime_reconcile_time_seconds).
func Reconciles(controller string) (int, time.Duration) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, 0
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					h := m.GetHistogram()
					return int(h.GetSampleCount()), time.Duration(h.GetSampleSum() * float64(time.Second)) //nolint:gosec // G115: a count of reconciles, far below 2^63
				}
			}
		}
	}
	return 0, 0
}

// CountsBy sums a counter metric of the manager's registry by the value of one label, e.g.
// capwin_winrm_operations_total by operation.
func CountsBy(metric, label string) map[string]int {
	out := map[string]int{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out
}
