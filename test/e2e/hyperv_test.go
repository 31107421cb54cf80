package e2e_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness"
)

// TestHyperV is scenario 6: create (with a manager restart in the middle), blue/green upgrade and
// delete on three simulated Hyper-V hosts (real WinRM, config drives read by their Joliet names).
// The workers keep containerd's data on a data disk of their VMs (target 0, LUN 1 in Windows), and
// their golden disks come by parentDiskSource from a share the hosts copy them from.
func TestHyperV(t *testing.T) {
	t.Parallel()
	h := start(t, harness.HyperV)
	ctx, p := t.Context(), progress(t)
	g := NewWithT(t)
	const workers, app = "win", "web"

	g.Expect(h.CreateCluster(ctx)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: workers, Image: "ltsc2022", Replicas: 3, HyperVIsolation: true,
		Bootstrap: containerdOnDataDisk(0, 1), Machine: func(o client.Object) {
			spec := &o.(*infrav1.HyperVMachineTemplate).Spec.Template.Spec
			spec.DataDisks = []infrav1.HyperVDataDisk{{Name: "containerd", SizeGiB: 20}}
			// The workers' golden disks come from the hosts' share: each host copies and verifies
			// one per image, and the files it keeps are not counted as left behind.
			spec.ParentDisk, spec.ParentDiskSource = "", harness.HyperVSource(spec.ParentDisk)
		}})).To(Succeed())
	// The providers and CAPI restart while the VMs are being created: no VM is created twice.
	_, err := h.WaitFor(ctx, "first VM", stepTimeout, func(s harness.Snapshot) bool { return s.VMs > 0 }, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.Management.RestartManager(ctx)).To(Succeed())
	p("6. manager restarted during the create")
	// A Machine whose create intent was recorded but whose answer the restart lost waits the
	// provider's create grace (5 minutes: a clone may still be running on vCenter) before it
	// sends the create again, so this step may take that long.
	_, err = h.WaitWorkers(ctx, "create 3", 3, "ltsc2022", stepTimeout+6*time.Minute, p)
	g.Expect(err).NotTo(HaveOccurred())
	creates := 0
	for _, host := range h.HyperV {
		creates += host.Ops()["create"]
	}
	g.Expect(creates).To(Equal(3), "one create per VM across the restart")
	hosts := map[string]int{}
	for _, n := range windowsNodes(ctx, g, h) {
		g.Expect(n.Spec.ProviderID).To(HavePrefix("hyperv://"))
		hosts[strings.Split(strings.TrimPrefix(n.Spec.ProviderID, "hyperv://"), "/")[0]]++
		g.Expect(n.Spec.Taints).To(ContainElement(corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}))
	}
	g.Expect(hosts).To(HaveLen(3), "one VM per host: %v", hosts)
	checkDataDisks(g, h, workers, infrav1.DataDiskStatus{Name: "containerd", Target: 0, LUN: 1})
	g.Expect(h.DeployApp(ctx, harness.App{Name: app, Replicas: 3, MinAvailable: 2, HyperVIsolation: true,
		Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"})).To(Succeed())
	g.Expect(h.WaitApp(ctx, app, 3, stepTimeout)).To(Succeed())
	p("6. Hyper-V create: 3 Ready nodes spread over %d hosts", len(hosts))
	checkJoinedLogs(t, h, workers, 3)
	checkNeverJoinedLogs(t, h, "ltsc2022")
	p("6. render logs: the 3 nodes' logs through Node Log Query; a never-joined Machine's story")
	healthRemediation(t, h, p)

	avail := h.TrackAvailability(ctx, app, 100*time.Millisecond)
	g.Expect(h.SetWorkersImage(ctx, workers, "ltsc2025")).To(Succeed())
	s, err := h.WaitWorkers(ctx, "rollout", 3, "ltsc2025", stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.WaitApp(ctx, app, 3, stepTimeout)).To(Succeed())
	minAvail := avail.Stop()
	g.Expect(minAvail).To(BeNumerically(">=", 2))
	g.Expect(s.VMs).To(Equal(3))
	checkDataDisks(g, h, workers, infrav1.DataDiskStatus{Name: "containerd", Target: 0, LUN: 1})
	p("6. Hyper-V blue/green: 3 nodes on 10.0.26100, fewest app pods available %d", minAvail)

	s, err = h.DeleteCluster(ctx, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.VMs+s.Files+s.Tokens).To(BeZero(), "no VM, disk, config drive or token left")
	p("6. Hyper-V delete: 0 VMs, 0 files, 0 tokens")
}
