// Package metrics reads capwin's series from controller-runtime's metrics registry in tests.
package metrics

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Sample is one series: its labels and its value (a counter's or gauge's value, a histogram's
// observation count).
type Sample struct {
	Labels map[string]string
	Value  float64
	// Sum is a histogram's sum of observations.
	Sum float64
}

// Samples returns the series of one metric family (none when it is not registered).
func Samples(name string) ([]Sample, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	var out []Sample
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			s := Sample{Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.Labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Counter != nil:
				s.Value = m.GetCounter().GetValue()
			case m.Gauge != nil:
				s.Value = m.GetGauge().GetValue()
			case m.Histogram != nil:
				s.Value, s.Sum = float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Value is the sum of the values of the series of a family whose labels include want.
func Value(name string, want map[string]string) (float64, error) {
	samples, err := Samples(name)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, s := range samples {
		if matches(s.Labels, want) {
			total += s.Value
		}
	}
	return total, nil
}

func matches(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// VCenterConnections is how many TLS connections this process's capwin managers opened to
// vCenter (capwin_vcenter_connections_opened_total).
func VCenterConnections() int64 {
	v, _ := Value("capwin_vcenter_connections_opened_total", nil)
	return int64(v)
}

// WinRM is what this process's capwin managers did on Hyper-V hosts: operations run, WinRM HTTP
// round trips sent, and the time spent in operations (the duration histogram's sum).
func WinRM() (ops, roundTrips int64, spent time.Duration) {
	o, _ := Value("capwin_winrm_operations_total", nil)
	r, _ := Value("capwin_winrm_round_trips_total", nil)
	samples, _ := Samples("capwin_winrm_operation_duration_seconds")
	sum := 0.0
	for _, s := range samples {
		sum += s.Sum
	}
	return int64(o), int64(r), time.Duration(sum * float64(time.Second))
}
