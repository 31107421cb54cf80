package e2e_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/adsim"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// TestVCenter runs the scenarios on vcsim in order, on one Cluster: create (1), scale (2),
// blue/green OS upgrade (3), side by side (4), MachineHealthCheck remediation (5), delete (7).
func TestVCenter(t *testing.T) {
	t.Parallel()
	h := start(t, harness.VCenter)
	ctx, p := t.Context(), progress(t)
	g := NewWithT(t)
	const workers, app = "win", "web"

	// 1. Create: 3 Windows Server 2022 machines; a Windows Deployment runs on them.
	g.Expect(h.CreateCluster(ctx)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: workers, Image: "ltsc2022", Replicas: 3, HyperVIsolation: true})).To(Succeed())
	_, err := h.WaitWorkers(ctx, "create 3", 3, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	nodes := windowsNodes(ctx, g, h)
	g.Expect(nodes).To(HaveLen(3))
	for _, n := range nodes {
		g.Expect(n.Spec.Taints).To(ContainElement(corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}))
		g.Expect(n.Labels).To(HaveKeyWithValue(corev1.LabelWindowsBuild, "10.0.20348"))
		g.Expect(n.Spec.ProviderID).To(HavePrefix("vsphere://"))
	}
	// Once, in a loaded CI run, a Machine was listed here without providerID and nodeRef right
	// after WaitWorkers had counted three Ready Machines (cause not found: Ready needs a nodeRef);
	// checked eventually, and it fails if a Machine was replaced instead.
	g.Eventually(func(g Gomega) {
		byProviderID := map[string]string{}
		for _, m := range machinesOf(t, h, workers) {
			byProviderID[m.Spec.ProviderID] = m.Status.NodeRef.Name
		}
		for _, n := range nodes {
			g.Expect(byProviderID).To(HaveKeyWithValue(n.Spec.ProviderID, n.Name), "Machine and Node agree on the providerID")
		}
	}, 30*time.Second, 500*time.Millisecond).Should(Succeed())
	g.Expect(h.DeployApp(ctx, harness.App{Name: app, Replicas: 3, MinAvailable: 2, HyperVIsolation: true,
		Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"})).To(Succeed())
	g.Expect(h.WaitApp(ctx, app, 3, stepTimeout)).To(Succeed())
	p("1. create: 3 Ready Windows nodes (tainted, 10.0.20348, providerIDs match), app Running on them")
	checkJoinedLogs(t, h, workers, 3)
	checkNeverJoinedLogs(t, h, "ltsc2022")
	p("1. render logs: the 3 nodes' logs through Node Log Query; a never-joined Machine's story")

	// 2. Scale 3 -> 5 -> 2: VMs follow; the scale-down drains each Node (the PDB holds).
	g.Expect(h.ScaleWorkers(ctx, workers, 5)).To(Succeed())
	_, err = h.WaitWorkers(ctx, "scale to 5", 5, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	d, avail := watchDrains(ctx, h), h.TrackAvailability(ctx, app, 100*time.Millisecond)
	g.Expect(h.ScaleWorkers(ctx, workers, 2)).To(Succeed())
	_, err = h.WaitWorkers(ctx, "scale to 2", 2, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.WaitApp(ctx, app, 3, stepTimeout)).To(Succeed())
	drained, minAvail := d.result(), avail.Stop()
	g.Expect(drained).To(HaveLen(3))
	g.Expect(drained).NotTo(ContainElement(false), "every deleted Machine's Node was drained first: %v", drained)
	g.Expect(minAvail).To(BeNumerically(">=", 2))
	p("2. scale: 5 then 2 VMs; 3 deleted Machines drained first; fewest app pods available %d", minAvail)

	// 3. Blue/green to Windows Server 2025 under the PDB (minAvailable 2).
	g.Expect(h.ScaleWorkers(ctx, workers, 3)).To(Succeed())
	_, err = h.WaitWorkers(ctx, "scale to 3", 3, "ltsc2022", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.WaitApp(ctx, app, 3, stepTimeout)).To(Succeed())
	old := machinesOf(t, h, workers)
	avail = h.TrackAvailability(ctx, app, 100*time.Millisecond)
	g.Expect(h.SetWorkersImage(ctx, workers, "ltsc2025")).To(Succeed())
	s, err := h.WaitWorkers(ctx, "rollout", 3, "ltsc2025", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.WaitApp(ctx, app, 3, stepTimeout)).To(Succeed())
	minAvail = avail.Stop()
	g.Expect(minAvail).To(BeNumerically(">=", 2), "the PDB was never violated")
	g.Expect(s.NodesReady).To(Equal(map[string]int{"10.0.26100": 3}))
	now := map[string]bool{}
	for _, m := range machinesOf(t, h, workers) {
		now[m.Name] = true
	}
	for _, m := range old {
		g.Expect(now).NotTo(HaveKey(m.Name), "old Machine %s deleted", m.Name)
	}
	g.Expect(s.VMs).To(Equal(3), "every old VM deleted")
	p("3. blue/green: all nodes on 10.0.26100, fewest app pods available %d (PDB minAvailable 2)", minAvail)

	// 4. Side by side: a process-isolated app pinned to a build moves to a new MachineDeployment.
	dir := sideBySide(t, h, p)

	// 5. MachineHealthCheck: a guest that never joins is replaced.
	remediation(t, h, p)

	// 7. Delete the Cluster: nothing left.
	s, err = h.DeleteCluster(ctx, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.VMs + s.Files + s.Rules + s.Tagged + s.Tokens + s.Machines).To(BeZero())
	g.Expect(h.Guests.Running()).To(BeEmpty())
	g.Expect(dir.Computers()).To(BeEmpty(), "the Machines' deletion deleted win25's computer accounts")
	p("7. delete: 0 VMs, 0 Machines, 0 anti-affinity rules, 0 tag attachments, 0 bootstrap tokens, 0 computer accounts")
}

// sideBySide: MachineDeployment "win22" (ltsc2022) runs a process-isolated ltsc2022 app pinned
// by node.kubernetes.io/windows-build; "win25" (ltsc2025) comes up beside it; the app switches
// image and selector and moves; then win22 is scaled to 0. Each has kubelet settings of its own
// (spec.kubeletConfiguration, win22 in the powershell format), which its Nodes show.
func sideBySide(t *testing.T, h *harness.Harness, p harness.Progress) *adsim.Directory {
	g := NewWithT(t)
	ctx := t.Context()
	const app = "legacy"
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: "win22", Image: "ltsc2022", Replicas: 2, Bootstrap: func(s *bootstrapv1.WindowsConfigSpec) {
		s.Format, s.KubeletConfiguration = bootstrapv1.FormatPowerShell, kubelet(`{"maxPods": 60, "systemReserved": {"memory": "1Gi"}}`)
	}})).To(Succeed())
	g.Eventually(func() int { return readyNodes(t, h, "10.0.20348") }, stepTimeout, time.Second).Should(Equal(2))
	pin := func(image string) harness.App {
		return harness.App{Name: app, Replicas: 2, NodeSelector: map[string]string{corev1.LabelWindowsBuild: harness.Build(image)},
			Image: "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-" + image}
	}
	g.Expect(h.DeployApp(ctx, pin("ltsc2022"))).To(Succeed())
	g.Expect(h.WaitApp(ctx, app, 2, stepTimeout)).To(Succeed())

	enterprise, dir := enterpriseWorkers(t, h)
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: "win25", Image: "ltsc2025", Replicas: 2, Bootstrap: func(s *bootstrapv1.WindowsConfigSpec) {
		enterprise(s)
		s.KubeletConfiguration = kubelet(`{"maxPods": 50}`)
	}, Machine: enterpriseMachines})).To(Succeed())
	g.Eventually(func() int { return readyNodes(t, h, "10.0.26100") }, stepTimeout, time.Second).Should(Equal(5)) // 3 of "win" + 2
	// 4 GiB VMs; the Windows kubelet's default hard eviction threshold is 500Mi of memory.
	for md, want := range map[string][]string{
		"win22": {"60 pods, 2572Mi", "60 pods, 2572Mi"}, "win25": {"50 pods, 3596Mi", "50 pods, 3596Mi"},
		"win": {"110 pods, 3596Mi", "110 pods, 3596Mi", "110 pods, 3596Mi"},
	} {
		g.Eventually(func() []string { return nodeResources(t, h, md) }, 30*time.Second, time.Second).Should(ConsistOf(want), md)
	}
	g.Eventually(func(g Gomega) {
		machines := machinesOf(t, h, "win25")
		g.Expect(machines).To(HaveLen(2))
		for _, m := range machines {
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "machine %s has a Node", m.Name)
			checkEnterpriseNode(g, h, dir, m)
		}
		// win25 is the one MachineDeployment with anti-affinity: one rule, and its two VMs carry
		// two tags each.
		snap, err := h.Snapshot(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(snap.Rules).To(Equal(1), "win25's anti-affinity rule")
		g.Expect(snap.Tagged).To(Equal(2*len(harness.VSphereTags)), "tag attachments of win25's VMs")
	}, 30*time.Second, 500*time.Millisecond).Should(Succeed())
	g.Expect(h.DeployApp(ctx, pin("ltsc2025"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		byNode, n, err := h.AppPods(ctx, app)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(n).To(Equal(2))
		for node := range byNode {
			g.Expect(buildOf(t, h, node)).To(Equal("10.0.26100"), "pod on %s", node)
		}
	}, stepTimeout, time.Second).Should(Succeed())
	g.Expect(h.ScaleWorkers(ctx, "win22", 0)).To(Succeed())
	g.Eventually(func() int { return readyNodes(t, h, "10.0.20348") + len(machinesOf(t, h, "win22")) }, stepTimeout, time.Second).Should(BeZero())
	p("4. side by side: win25 pulls through the company mirror (CA, credentials), its computer accounts are in the gMSA hosts group; app moved to win25 by windows-build; win22 scaled to 0")
	return dir
}

// remediation: of MachineDeployment "flaky", the first guest never joins and the second fails
// at the containerd step (the VCenterMachine reports it); its MachineHealthCheck (node startup
// timeout 45s, the shortest CAPI admits is 30s) has both Machines replaced.
func remediation(t *testing.T, h *harness.Harness, p harness.Progress) {
	g := NewWithT(t)
	ctx := t.Context()
	var mu sync.Mutex
	broken := map[string]guest.Faults{}
	h.Guests.SetFaults(func(vm string) guest.Faults {
		mu.Lock()
		defer mu.Unlock()
		f, ok := broken[vm]
		if !ok && strings.HasPrefix(vm, "flaky-") && len(broken) < 2 {
			f = []guest.Faults{{NeverJoin: true}, {FailAt: "containerd"}}[len(broken)]
			broken[vm] = f
		}
		return f
	})
	defer h.Guests.SetFaults(nil)
	g.Expect(h.CreateHealthCheck(ctx, "flaky", 45*time.Second, time.Minute)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: "flaky", Image: "ltsc2025", Replicas: 2})).To(Succeed())
	begin, failureReported := time.Now(), false
	g.Eventually(func(g Gomega) {
		mu.Lock()
		defer mu.Unlock()
		g.Expect(broken).To(HaveLen(2), "both broken guests booted")
		for vm, f := range broken {
			vc := &infrav1.VCenterMachine{}
			if f.FailAt != "" && h.Management.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: vm}, vc) == nil {
				for _, c := range vc.Status.Conditions {
					failureReported = failureReported || c.Type == infrav1.BootstrapSucceededCondition &&
						c.Reason == infrav1.BootstrapFailedReason && strings.Contains(c.Message, "containerd")
				}
			}
		}
		ms := machinesOf(t, h, "flaky")
		g.Expect(ms).To(HaveLen(2))
		for _, m := range ms {
			g.Expect(broken).NotTo(HaveKey(m.Spec.InfrastructureRef.Name), "the Machines of the broken VMs were replaced")
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue())
		}
	}, 5*time.Minute, time.Second).Should(Succeed())
	g.Expect(failureReported).To(BeTrue(), "the failed step was reported on the VCenterMachine before remediation")
	p("5. remediation: a never-joining and a failed (containerd) Machine replaced after %.0fs", time.Since(begin).Seconds())
	g.Expect(h.ScaleWorkers(ctx, "flaky", 0)).To(Succeed())
}
