package e2e_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness"
)

// TestHyperVFailoverCluster runs a MachineDeployment on three simulated Hyper-V hosts that are the
// nodes of one failover cluster: the workers' VMs live on its shared volume as roles with one
// anti-affinity class, the Nodes' providerIDs name the cluster, a node failure moves its VM to
// another node (status.vm.host follows, the machines stay Ready, no VM is created again), and
// deleting the cluster leaves no VM, file, role or token.
func TestHyperVFailoverCluster(t *testing.T) {
	t.Parallel()
	h := start(t, harness.HyperV, func(o *harness.Options) { o.HyperVFailoverCluster = true })
	ctx, p := t.Context(), progress(t)
	g := NewWithT(t)
	g.Expect(h.CreateCluster(ctx)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: "win", Image: "ltsc2022", Replicas: 2})).To(Succeed())
	_, err := h.WaitWorkers(ctx, "create 2", 2, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	for _, n := range windowsNodes(ctx, g, h) {
		g.Expect(n.Spec.ProviderID).To(HavePrefix("hyperv://" + strings.ToLower(harness.HyperVFailoverClusterName) + "/"))
	}
	roles := h.HyperVCluster.Groups()
	g.Expect(roles).To(HaveLen(2))
	g.Expect(roles[0].AntiAffinityClassNames).To(HaveLen(1))
	g.Expect(roles[1].AntiAffinityClassNames).To(Equal(roles[0].AntiAffinityClassNames))
	g.Expect(roles[0].Owner).NotTo(Equal(roles[1].Owner), "one MachineDeployment spreads over the nodes")
	creates := 0
	for _, host := range h.HyperV {
		creates += host.Ops()["create"]
	}
	p("failover cluster: 2 Ready nodes, roles on %s and %s", roles[0].Owner, roles[1].Owner)

	moved := h.HyperVCluster.Fail(roles[0].Owner)
	to := moved[roles[0].Name]
	g.Expect(to).NotTo(BeEmpty())
	g.Eventually(func(g Gomega) {
		list := &infrav1.HyperVMachineList{}
		g.Expect(h.Management.Client.List(ctx, list, client.InNamespace(harness.Namespace))).To(Succeed())
		found := false
		for _, m := range list.Items {
			if string(m.UID) == roles[0].Name {
				found = true
				g.Expect(m.Status.VM.Host).To(Equal(to))
			}
		}
		g.Expect(found).To(BeTrue())
	}, stepTimeout, time.Second).Should(Succeed())
	s, err := h.WaitWorkers(ctx, "after the failover", 2, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.VMs).To(Equal(2))
	after := 0
	for _, host := range h.HyperV {
		after += host.Ops()["create"]
	}
	g.Expect(after).To(Equal(creates), "no VM created again")
	h.HyperVCluster.Recover(roles[0].Owner)
	p("failover cluster: node %s failed, its VM runs on %s", roles[0].Owner, to)

	s, err = h.DeleteCluster(ctx, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.VMs+s.Files+s.Roles+s.Tokens).To(BeZero(), "no VM, disk, config drive, cluster role or token left")
}
