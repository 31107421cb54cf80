package machine

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/guestos"
)

var (
	machinesDesc = prometheus.NewDesc("capwin_machines",
		"Machines (VCenterMachine, HyperVMachine) by kind and provisioning state, counted from the manager's cache.",
		[]string{"kind", "state"}, nil)
	bootstrapStatesDesc = prometheus.NewDesc("capwin_machines_by_bootstrap_state",
		"Machines by kind and the state of the guest's last bootstrap report (None: no report yet).",
		[]string{"kind", "state"}, nil)
)

// provisioningStates and bootstrapStates are always exported, zero included, so a series does
// not vanish when its last machine leaves the state.
var (
	provisioningStates = []infrav1.ProvisioningState{infrav1.StatePending, infrav1.StateCloning, infrav1.StateConfiguring,
		infrav1.StatePoweringOn, infrav1.StateWaitingForAddresses, infrav1.StateProvisioned, infrav1.StateDeleting}
	bootstrapStates = []string{"None", guestos.ReportRunning, guestos.ReportRebooting, guestos.ReportFailed, guestos.ReportSucceeded}
)

// StateCounts exports the machine counts by state. It is a manager runnable that registers
// itself on the metrics registry while its manager leads and lists the cached objects at each
// scrape, so counts carry no per-object series and nothing leaks when objects are deleted.
type StateCounts struct {
	Reader client.Reader
	Kinds  []Kind
	// WatchFilterValue counts only the machines of this manager's shard (their
	// cluster.x-k8s.io/watch-filter label), so the series of several shards add up.
	WatchFilterValue string
}

// NeedLeaderElection: only the leader's cache holds the machines its controllers watch.
func (c *StateCounts) NeedLeaderElection() bool { return true }

// Start registers the collector until ctx ends. Another manager of the same process (a test's
// restart) may still hold the registration: it is retried until that one is gone.
func (c *StateCounts) Start(ctx context.Context) error {
	for {
		err := metrics.Registry.Register(c)
		if err == nil {
			break
		}
		if !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	<-ctx.Done()
	metrics.Registry.Unregister(c)
	return nil
}

// Describe implements prometheus.Collector.
func (c *StateCounts) Describe(ch chan<- *prometheus.Desc) {
	ch <- machinesDesc
	ch <- bootstrapStatesDesc
}

// Collect implements prometheus.Collector.
func (c *StateCounts) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, k := range c.Kinds {
		states, boots, err := c.count(ctx, k)
		if err != nil {
			ctrl.Log.WithName("metrics").Error(err, "Counting machines", "kind", k.Name)
			continue
		}
		for s, n := range states {
			ch <- prometheus.MustNewConstMetric(machinesDesc, prometheus.GaugeValue, float64(n), k.Name, s)
		}
		for s, n := range boots {
			ch <- prometheus.MustNewConstMetric(bootstrapStatesDesc, prometheus.GaugeValue, float64(n), k.Name, s)
		}
	}
}

// count lists one kind's machines and counts them by provisioning and bootstrap state.
func (c *StateCounts) count(ctx context.Context, k Kind) (map[string]int, map[string]int, error) {
	list := k.NewList()
	opts := []client.ListOption{client.UnsafeDisableDeepCopy} // read only
	if c.WatchFilterValue != "" {
		opts = append(opts, client.MatchingLabels{clusterv1.WatchLabel: c.WatchFilterValue})
	}
	if err := c.Reader.List(ctx, list, opts...); err != nil {
		return nil, nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, nil, err
	}
	states, boots := map[string]int{}, map[string]int{}
	for _, s := range provisioningStates {
		states[string(s)] = 0
	}
	for _, s := range bootstrapStates {
		boots[s] = 0
	}
	for _, item := range items {
		obj, ok := item.(hypervisor.Object)
		if !ok {
			continue
		}
		st := obj.GetMachineStatus()
		states[stateLabel(st.Provisioning.State)]++
		boots[bootstrapLabel(st.Bootstrap.State)]++
	}
	return states, boots, nil
}

// stateLabel is a provisioning state as a label value (a new object has none yet: Pending).
func stateLabel(s infrav1.ProvisioningState) string {
	if s == "" {
		return string(infrav1.StatePending)
	}
	return string(s)
}

// bootstrapLabel is a report state as a label value ("None" before the first report).
func bootstrapLabel(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
