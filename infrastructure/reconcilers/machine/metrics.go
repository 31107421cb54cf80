package machine

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// Histograms of what the guests report, exported on the manager's /metrics. kind is the
// controller name (vcentermachine, hypervmachine); step one of guestos.BootstrapSteps.
var (
	bootstrapStepSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "capwin_bootstrap_step_duration_seconds",
		Help: "Time of each bootstrap step of a Windows guest, from the first report of the step to the first report of a later one " +
			"(resolution: the guest poll interval; a step that reboots includes the reboot).",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600},
	}, []string{"kind", "step"})
	createToNodeReadySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "capwin_machine_create_to_node_ready_seconds",
		Help:    "Time from the VM create request to the Machine's NodeReady condition turning true.",
		Buckets: []float64{30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 7200},
	}, []string{"kind"})
)

// vmReads counts the lookups of machines' VMs (one per reconcile that reaches the hypervisor)
// by the machine's provisioning state: where the polling goes.
var vmReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "capwin_machine_vm_reads_total",
	Help: "Lookups of a machine's VM on its hypervisor, by the machine's provisioning state when it was read " +
		"(Provisioned: waiting for its Node or for the end of its bootstrap report; WaitingForAddresses: for its guest).",
}, []string{"kind", "state"})

func init() { metrics.Registry.MustRegister(bootstrapStepSeconds, createToNodeReadySeconds, vmReads) }

// countRead counts one lookup of the machine's VM.
func (r *Reconciler) countRead(st *infrav1.MachineStatus) {
	state := string(st.Provisioning.State)
	if state == "" {
		state = "New"
	}
	vmReads.WithLabelValues(r.Kind.Name, state).Inc()
}

// clock runs f on the step clock of the scope's machine.
func (r *Reconciler) clock(s *hypervisor.Scope, f func(*stepClock)) {
	obj := s.InfraMachine
	r.clocks.with(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, obj.GetUID(), f)
}

// observeCreate starts the create-to-ready clock of a machine whose VM create was just sent.
func (r *Reconciler) observeCreate(s *hypervisor.Scope) {
	now := r.now()
	r.clock(s, func(c *stepClock) { c.created = now })
}

// observeReport times the bootstrap step a guest report completed, once per machine and step.
func (r *Reconciler) observeReport(s *hypervisor.Scope, rep infrav1.BootstrapStatus) {
	now := r.now()
	r.clock(s, func(c *stepClock) {
		if st, ok := c.advance(rep.Step, rep.State, now); ok {
			bootstrapStepSeconds.WithLabelValues(r.Kind.Name, st.Step).Observe(st.Duration.Seconds())
		}
	})
}

// observeNodeReady records the create-to-ready time once the Machine's Node is Ready.
func (r *Reconciler) observeNodeReady(s *hypervisor.Scope) {
	ready := conditions.Get(s.Machine, clusterv1.MachineNodeReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionTrue {
		return
	}
	at := ready.LastTransitionTime.Time
	if at.IsZero() {
		at = r.now()
	}
	r.clock(s, func(c *stepClock) {
		if d, ok := c.nodeReady(at); ok && d >= 0 {
			createToNodeReadySeconds.WithLabelValues(r.Kind.Name).Observe(d.Seconds())
		}
	})
}
