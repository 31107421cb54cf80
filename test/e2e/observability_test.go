package e2e_test

import (
	"bytes"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/internal/test/metrics"
	"github.com/capwin/capwin/test/framework/harness"
)

// TestObservability runs one Windows machine through on simulated Hyper-V hosts, then reads what
// an operator would: `render diagnostics` of its Machine and the managers' metrics registry (the
// series and counts this one machine adds), and after the delete the machine counts again.
func TestObservability(t *testing.T) {
	h := start(t, harness.HyperV)
	ctx, p := t.Context(), progress(t)
	g := NewWithT(t)
	value := func(name string, labels map[string]string) float64 {
		v, err := metrics.Value(name, labels)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
	hv := map[string]string{"kind": "hypervmachine"}
	before := map[string]float64{
		"ready":  value("capwin_machine_create_to_node_ready_seconds", hv),
		"steps":  value("capwin_bootstrap_step_duration_seconds", hv),
		"create": value("capwin_winrm_operations_total", map[string]string{"operation": "create", "outcome": "ok"}),
		"issue":  value("capwin_bootstrap_tokens_total", map[string]string{"operation": "issue"}),
		"revoke": value("capwin_bootstrap_tokens_total", map[string]string{"operation": "revoke"}),
	}

	g.Expect(h.CreateCluster(ctx)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: "obs", Image: "ltsc2022", Replicas: 1})).To(Succeed())
	_, err := h.WaitWorkers(ctx, "create 1", 1, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	machines := machinesOf(t, h, "obs")
	g.Expect(machines).To(HaveLen(1))

	// Diagnostics of the joined machine, looked up by its HyperVMachine's name.
	c, err := client.New(h.Management.Env.Config, client.Options{Scheme: diagnostics.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	story, err := diagnostics.Collect(ctx, c, harness.Namespace, machines[0].Spec.InfrastructureRef.Name)
	g.Expect(err).NotTo(HaveOccurred())
	var out bytes.Buffer
	g.Expect(diagnostics.Write(&out, story, 20)).To(Succeed())
	g.Expect(out.String()).To(MatchRegexp(`Phase:\s+Running`))
	g.Expect(out.String()).To(MatchRegexp(`State:\s+Succeeded`))
	g.Expect(out.String()).To(MatchRegexp(`Ready:\s+True`))
	g.Expect(out.String()).To(MatchRegexp(`Host:\s+\S+`))
	g.Expect(out.String()).To(MatchRegexp(`Taints:\s+os=windows:NoSchedule`))
	g.Expect(out.String()).To(ContainSubstring("DataSecretCreated"), "the WindowsConfig's event")
	p("diagnostics:\n%s", out.String())

	// The machine's series: one create-to-ready, at most one observation per bootstrap step.
	g.Eventually(func() float64 {
		return value("capwin_bootstrap_tokens_total", map[string]string{"operation": "revoke"})
	}, stepTimeout).
		Should(BeNumerically(">=", before["revoke"]+1), "the joined node's token is revoked")
	// Observed by the HyperVMachine's next reconcile after the Machine's NodeReady, which may come
	// after the token's revoke (a loaded CI run saw it later).
	g.Eventually(func() float64 { return value("capwin_machine_create_to_node_ready_seconds", hv) }, stepTimeout).
		Should(BeNumerically(">=", before["ready"]+1))
	g.Consistently(func() float64 { return value("capwin_machine_create_to_node_ready_seconds", hv) }, 3*time.Second).
		Should(Equal(before["ready"]+1), "one create-to-ready observation per machine")
	g.Expect(value("capwin_bootstrap_step_duration_seconds", hv)).To(BeNumerically(">", before["steps"]))
	samples, err := metrics.Samples("capwin_bootstrap_step_duration_seconds")
	g.Expect(err).NotTo(HaveOccurred())
	for _, s := range samples {
		g.Expect(s.Labels).To(HaveLen(2), "kind and step only, never an object name")
	}
	g.Expect(value("capwin_winrm_operations_total", map[string]string{"operation": "create", "outcome": "ok"})).To(Equal(before["create"] + 1))
	g.Expect(value("capwin_winrm_operation_duration_seconds", map[string]string{"operation": "find"})).To(BeNumerically(">", 0))
	g.Expect(value("capwin_bootstrap_tokens_total", map[string]string{"operation": "issue"})).To(BeNumerically(">=", before["issue"]+1))
	g.Expect(value("capwin_machines", map[string]string{"kind": "hypervmachine", "state": "Provisioned"})).To(Equal(1.0))
	g.Expect(value("capwin_machines_by_bootstrap_state", map[string]string{"kind": "hypervmachine", "state": "Succeeded"})).To(Equal(1.0))
	p("metrics: create-to-ready, step durations, WinRM operations, tokens and machine counts recorded")

	_, err = h.DeleteCluster(ctx, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() float64 { return value("capwin_machines", hv) }, stepTimeout).Should(BeZero(), "no machine counted after the delete")
}
