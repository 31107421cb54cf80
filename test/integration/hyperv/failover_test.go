package hyperv_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

const csvParent = `C:\ClusterStorage\Volume1\golden\win2022.vhdx`

// failoverCluster starts two simulated hosts as the nodes of failover cluster HVCLU1 (the parent
// disk on its CSV) and a workload cluster whose HyperVCluster names them and the cluster.
func failoverCluster(t *testing.T) (*fixture, *hypervsim.Cluster, map[string]*hypervsim.Host) {
	t.Helper()
	f, c, nodes := clusterOfNodes(t, "HVCLU1")
	f.provisioned(t)
	return f, c, nodes
}

// clusterOfNodes is failoverCluster with the HyperVCluster naming failover cluster name, not yet
// provisioned.
func clusterOfNodes(t *testing.T, name string) (*fixture, *hypervsim.Cluster, map[string]*hypervsim.Host) {
	t.Helper()
	nodes := map[string]*hypervsim.Host{}
	var served []simHost
	for _, name := range []string{"node1", "node2"} {
		nodes[name] = hypervsim.NewHost(name, 131072, []string{vswitch}, nil)
		nodes[name].SetJobDelay(100 * time.Millisecond)
	}
	c := hypervsim.NewCluster("HVCLU1", nodes["node1"], nodes["node2"])
	nodes["node1"].AddVHD(csvParent, hypervsim.VHD{Type: "Dynamic", SizeBytes: 30 << 30})
	for _, name := range []string{"node1", "node2"} {
		srv, err := nodes[name].Serve(map[string]string{hostUser: hostPassword})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		served = append(served, simHost{Host: nodes[name], srv: srv})
	}
	f := newCluster(t, func(s *infrav1.HyperVClusterSpec) {
		s.Hosts = nil
		for _, h := range served {
			s.Hosts = append(s.Hosts, infrav1.HyperVHost{Name: h.Name, Address: h.srv.Host, Port: int32(h.srv.Port), //nolint:gosec // G115: a TCP port, below 2^16
				CredentialsRef: infrav1.SecretReference{Name: "hosts"}, CABundle: h.srv.CACertPEM()})
		}
		s.FailoverCluster = &infrav1.HyperVFailoverCluster{Name: name, StoragePath: `C:\ClusterStorage\Volume1\capwin`}
	})
	return f, c, nodes
}

// TestFailoverClusterWrongName: hosts that are nodes of another failover cluster than the one the
// HyperVCluster names are unavailable, and status.hosts says why.
func TestFailoverClusterWrongName(t *testing.T) {
	f, _, _ := clusterOfNodes(t, "HVCLU9")
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
		g.Expect(f.hc.Status.Hosts).To(HaveLen(2))
		for _, h := range f.hc.Status.Hosts {
			g.Expect(h.Available).To(BeFalse())
			g.Expect(h.Message).To(ContainSubstring(`not a node of failover cluster HVCLU9 (its cluster: HVCLU1)`))
		}
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

func clusteredSpec(mode infrav1.AntiAffinityMode) infrav1.HyperVMachineSpec {
	spec := defaultSpec()
	spec.ParentDisk = csvParent
	spec.AntiAffinity = &infrav1.HyperVAntiAffinity{Mode: mode}
	return spec
}

// countVMs counts the VMs on the nodes.
func countVMs(nodes map[string]*hypervsim.Host) int {
	n := 0
	for _, h := range nodes {
		n += len(h.VMs())
	}
	return n
}

// TestFailoverCluster: two machines of one MachineDeployment on a two-node failover cluster get
// their VMs on the CSV, on different nodes, each registered as a role with the group's anti-affinity
// class. The cluster moves one VM (live migration), then a node fails and its VM restarts on the
// other node: status.vm.host follows each time, the providerID (hyperv://hvclu1/<id>) stays, and
// no VM is created again. Deleting the machines leaves no role and no file on the CSV.
func TestFailoverCluster(t *testing.T) {
	g := NewWithT(t)
	f, c, nodes := failoverCluster(t)
	a := f.addMachine(t, "win-md-0-fc-"+randSuffix(), "md-0", userData, clusteredSpec(infrav1.AntiAffinitySoft))
	b := f.addMachine(t, "win-md-0-fc-"+randSuffix(), "md-0", userData, clusteredSpec(infrav1.AntiAffinitySoft))
	ma, mb := a.waitReason(t, infrav1.WaitingForAddressesReason), b.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(ma.Status.VM.Host).NotTo(Equal(mb.Status.VM.Host), "one MachineDeployment spreads over the nodes")
	g.Expect(ma.Spec.ProviderID).To(Equal("hyperv://hvclu1/" + ma.Status.VM.ID))
	groups := c.Groups()
	g.Expect(groups).To(HaveLen(2))
	class := groups[0].AntiAffinityClassNames
	g.Expect(class).To(HaveLen(1))
	g.Expect(class[0]).To(HavePrefix("capwin-" + f.ns + "-win-md-md-0-"))
	g.Expect(groups[1].AntiAffinityClassNames).To(Equal(class))
	g.Expect(slices.ContainsFunc(groups, func(gr hypervsim.Group) bool {
		return gr.Name == string(ma.UID) && gr.VMID == ma.Status.VM.ID && gr.Owner == ma.Status.VM.Host
	})).To(BeTrue(), "%+v", groups)
	creates := nodes["node1"].Ops()["create"] + nodes["node2"].Ops()["create"]

	// follow waits until a machine's status names the node, with the same VM and providerID.
	follow := func(mc *machine, before *infrav1.HyperVMachine, node string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			now := mc.get(g)
			g.Expect(now.Status.VM.Host).To(Equal(node), "%+v", now.Status.Conditions)
			g.Expect(now.Status.VM.ID).To(Equal(before.Status.VM.ID))
			g.Expect(now.Spec.ProviderID).To(Equal(before.Spec.ProviderID))
		}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	}
	other := map[string]string{"node1": "node2", "node2": "node1"}
	g.Expect(c.Move(string(ma.UID), other[ma.Status.VM.Host])).To(Succeed())
	follow(a, ma, other[ma.Status.VM.Host])

	failed := mb.Status.VM.Host // a's VM now runs beside b's; b's node fails
	g.Expect(c.Fail(failed)).To(HaveKeyWithValue(string(mb.UID), other[failed]))
	follow(b, mb, other[failed])
	g.Expect(countVMs(nodes)).To(Equal(2))
	g.Expect(nodes["node1"].Ops()["create"] + nodes["node2"].Ops()["create"]).To(Equal(creates))
	c.Recover(failed)

	for _, mc := range []*machine{a, b} {
		g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	}
	for _, mc := range []*machine{a, b} {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
		}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	}
	g.Expect(c.Groups()).To(BeEmpty())
	g.Expect(countVMs(nodes)).To(BeZero())
	g.Expect(c.Files()).To(Equal([]string{strings.ToLower(csvParent)}))
}

// TestFailoverClusterInterrupted: a create cut right after New-VM (no notes, no role) is finished
// by the next one, which registers the role once; a delete cut right after the role was
// unregistered is finished by the next one. Nothing is left: no role, no VM, no file on the CSV.
func TestFailoverClusterInterrupted(t *testing.T) {
	g := NewWithT(t)
	f, c, nodes := failoverCluster(t)
	spec := clusteredSpec(infrav1.AntiAffinityNone)
	spec.Host = "node1"
	h := nodes["node1"]
	h.CutCreates(1)
	mc := f.addMachine(t, "win-fc-cut-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(h.Ops()["create"]).To(Equal(2))
	g.Expect(c.Groups()).To(ConsistOf(hypervsim.Group{Name: string(m.UID), VMID: m.Status.VM.ID, Owner: "node1"}))

	h.CutRemoves(1)
	g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(h.Ops()["remove"]).To(BeNumerically(">=", 2))
	g.Expect(c.Groups()).To(BeEmpty())
	g.Expect(countVMs(nodes)).To(BeZero())
	g.Expect(c.Files()).To(Equal([]string{strings.ToLower(csvParent)}))
}

// TestFailoverClusterJobOnFailedNode: the node fails while the power-on job of a new VM runs there;
// the cluster starts the VM on the other node. The job is given up (its node does not answer), the
// VM is found through the cluster, running on the other node, and the machine goes on there.
func TestFailoverClusterJobOnFailedNode(t *testing.T) {
	g := NewWithT(t)
	f, c, nodes := failoverCluster(t)
	nodes["node1"].SetJobDelay(time.Hour)
	spec := clusteredSpec(infrav1.AntiAffinityNone)
	spec.Host = "node1"
	mc := f.addMachine(t, "win-fc-job-"+randSuffix(), "", userData, spec)
	g.Eventually(func(g Gomega) {
		st := mc.get(g).Status
		g.Expect(st.Task).To(HavePrefix("node1/job:"))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(c.Fail("node1")).To(HaveLen(1))
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.VM.Host).To(Equal("node2"))
	g.Expect(m.Status.Task).To(BeEmpty())
	vms := nodes["node2"].VMs()
	g.Expect(vms).To(HaveLen(1))
	g.Expect(vms[0].State).To(Equal("Running"))
	g.Expect(countVMs(nodes)).To(Equal(1))
}
