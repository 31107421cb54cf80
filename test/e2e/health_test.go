package e2e_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/nodehealth/health"
	"github.com/capwin/capwin/test/framework/harness"
)

// healthRemediation: a joined node runs capwin's node health checker (as the node-health addon
// does); its pod network's HNS network disappears while the kubelet stays Ready, the checker sets
// HNSNetworkUnavailable, and the MachineHealthCheck with the flavors' health conditions replaces
// the Machine with one whose node is healthy.
func healthRemediation(t *testing.T, h *harness.Harness, p harness.Progress) {
	g := NewWithT(t)
	ctx := t.Context()
	const md = "hns"
	h.Guests.SetNodeHealth(time.Second)
	defer h.Guests.SetNodeHealth(0)
	g.Expect(h.CreateHealthCheck(ctx, md, 2*time.Minute, 20*time.Second)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: md, Image: "ltsc2022", Replicas: 1})).To(Succeed())
	var sick clusterv1.Machine
	g.Eventually(func(g Gomega) {
		ms := machinesOf(t, h, md)
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Status.NodeRef.IsDefined()).To(BeTrue())
		sick = ms[0]
		g.Expect(nodeCondition(ctx, g, h, sick.Status.NodeRef.Name, health.HNSNetworkUnavailable)).To(
			And(HaveField("Status", corev1.ConditionFalse), HaveField("Reason", "NetworkPresent")))
	}, stepTimeout, time.Second).Should(Succeed())
	node := sick.Status.NodeRef.Name
	guest := h.Guests.ByNode(node)
	g.Expect(guest).NotTo(BeNil())
	begin := time.Now()
	guest.LoseHNSNetwork()
	g.Eventually(func(g Gomega) {
		g.Expect(nodeCondition(ctx, g, h, node, health.HNSNetworkUnavailable)).To(
			And(HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "NetworkMissing")))
		g.Expect(nodeCondition(ctx, g, h, node, corev1.NodeReady)).To(HaveField("Status", corev1.ConditionTrue), "the kubelet stays Ready")
	}, time.Minute, time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		ms := machinesOf(t, h, md)
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Name).NotTo(Equal(sick.Name), "the sick Machine was replaced")
		g.Expect(ms[0].Status.NodeRef.IsDefined()).To(BeTrue())
	}, stepTimeout, time.Second).Should(Succeed())
	p("5. node health: a node whose HNS network vanished (still Ready) replaced after %.0fs", time.Since(begin).Seconds())
	g.Expect(h.ScaleWorkers(ctx, md, 0)).To(Succeed())
	g.Eventually(func() []clusterv1.Machine { return machinesOf(t, h, md) }, stepTimeout, time.Second).Should(BeEmpty())
}

// nodeCondition is one condition of a workload Node (a zero condition if it has none of that type).
func nodeCondition(ctx context.Context, g Gomega, h *harness.Harness, node string, t corev1.NodeConditionType) corev1.NodeCondition {
	n := &corev1.Node{}
	g.Expect(h.WorkloadClient.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.NodeCondition{}
}
