package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/metrics"
)

// TestMetricsFollowTheGuestReports runs one machine through its bootstrap reports and reads the
// registry: each completed step and the create-to-ready time are observed exactly once though
// every poll reconciles the same report again, and the machine is counted by state.
func TestMetricsFollowTheGuestReports(t *testing.T) {
	g := NewWithT(t)
	steps := []string{"preflight", "containerd", "join", "finish"}
	before := map[string]float64{}
	for _, s := range steps {
		before[s] = metricValue(g, "capwin_bootstrap_step_duration_seconds", "step", s)
	}
	readyBefore := metricValue(g, "capwin_machine_create_to_node_ready_seconds")
	readsBefore := metricValue(g, "capwin_machine_vm_reads_total", "state", "Provisioned")

	f := newCluster(t, watchFilter)
	f.addMachine(t, "win-md-0-metrics-"+randSuffix(), userData, defaultSpec())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	vm := vmRef(m.Status.VM.ID)
	c := vc(g)
	guestSets(g, c, vm, map[string]string{"SET.guest.ipAddress": "10.0.0.31"})
	report := func(step, state string) {
		guestSets(g, c, vm, map[string]string{"guestinfo.capwin.bootstrap.status": `{"step":"` + step + `","state":"` + state + `"}`})
		g.Eventually(func(g Gomega) {
			g.Expect(f.get(g).Status.Bootstrap.Step).To(Equal(step))
			g.Expect(f.get(g).Status.Bootstrap.State).To(Equal(state))
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
		time.Sleep(time.Second) // several polls of the same report
	}
	report("preflight", "Running")
	report("containerd", "Running")
	report("join", "Running")
	report("finish", "Succeeded")

	f.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: m.Status.ComputerName}
	f.machine.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineNodeReadyCondition, Status: metav1.ConditionTrue,
		Reason: clusterv1.MachineNodeReadyReason, LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Update(ctx, f.machine)).To(Succeed())
	g.Eventually(func() float64 { return metricValue(g, "capwin_machine_create_to_node_ready_seconds") }, 10*time.Second, 50*time.Millisecond).
		Should(Equal(readyBefore + 1))
	touch := f.get(g)
	g.Expect(k8s.Patch(ctx, touch, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"1"}}}`)))).To(Succeed())
	g.Consistently(func(g Gomega) {
		for _, s := range steps {
			g.Expect(metricValue(g, "capwin_bootstrap_step_duration_seconds", "step", s)).To(Equal(before[s]+1), "step %s", s)
		}
		g.Expect(metricValue(g, "capwin_machine_create_to_node_ready_seconds")).To(Equal(readyBefore + 1))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(metricValue(g, "capwin_bootstrap_step_duration_seconds", "step", "proxy")).To(BeZero(), "a step never reported is not observed")
	g.Expect(metricValue(g, "capwin_machine_vm_reads_total", "state", "Provisioned")).To(BeNumerically(">=", readsBefore+4),
		"the polls of the provisioned machine while its guest reported are counted by state")

	g.Expect(metricValue(g, "capwin_machines", "state", "Provisioned")).To(BeNumerically(">=", 1))
	g.Expect(metricValue(g, "capwin_machines_by_bootstrap_state", "state", "Succeeded")).To(BeNumerically(">=", 1))
	g.Expect(metricSeries(g, "capwin_machines")).To(ContainElement(map[string]string{"kind": "hypervmachine", "state": "Deleting"}),
		"every kind and state is exported, zero included")
	g.Expect(metrics.VCenterConnections()).To(BeNumerically(">", 0), "TLS connections to vCenter are counted")
	g.Expect(metrics.Value("capwin_vcenter_calls_total", map[string]string{"method": "CloneVM_Task", "outcome": "ok"})).
		To(BeNumerically(">", 0), "vSphere calls are counted by method and outcome")
}

// metricValue sums a family's vcentermachine series whose labels include the pairs given.
func metricValue(g Gomega, name string, pairs ...string) float64 {
	want := map[string]string{"kind": "vcentermachine"}
	for i := 0; i+1 < len(pairs); i += 2 {
		want[pairs[i]] = pairs[i+1]
	}
	v, err := metrics.Value(name, want)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}

// metricSeries lists the label sets of a family.
func metricSeries(g Gomega, name string) []map[string]string {
	samples, err := metrics.Samples(name)
	g.Expect(err).NotTo(HaveOccurred())
	var out []map[string]string
	for _, s := range samples {
		out = append(out, s.Labels)
	}
	return out
}
