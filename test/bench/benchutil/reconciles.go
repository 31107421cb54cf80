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
					return int(h.GetSampleCount()), time.Duration(h.GetSampleSum() * float64(time.Second))
				}
			}
		}
	}
	return 0, 0
}
