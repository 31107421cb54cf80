package hyperv_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestGPUPlacement: of three hosts only hv3 has a GPU partition, and the HyperVCluster shows it in
// status.hosts[].gpu. A machine asking for a partition lands on hv3 and gets it, whatever the spread
// of its MachineDeployment says; a second one finds no host with a free partition and waits with
// VMProvisioned NoGPUAvailable (no VM made); deleting the first gives the partition back and the
// second is placed on hv3; deleting that one frees the partition again.
func TestGPUPlacement(t *testing.T) {
	g := NewWithT(t)
	hv3 := host("hv3")
	hv3.SetGPUs(1)
	t.Cleanup(func() { hv3.SetGPUs(0) })
	f := newCluster(t, nil)
	f.provisioned(t)
	freeOnHV3 := func(want *infrav1.HyperVHostGPUStatus) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
			gpus := map[string]*infrav1.HyperVHostGPUStatus{}
			for _, h := range f.hc.Status.Hosts {
				gpus[h.Name] = h.GPU
			}
			g.Expect(gpus).To(Equal(map[string]*infrav1.HyperVHostGPUStatus{"hv1": nil, "hv2": nil, "hv3": want}))
		}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	}
	freeOnHV3(&infrav1.HyperVHostGPUStatus{FreePartitions: 1})

	spec := defaultSpec()
	spec.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, Count: 1}
	first := f.addMachine(t, "win-gpu-"+randSuffix(), "md-gpu", userData, spec)
	m := first.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.VM.Host).To(Equal("hv3"))
	vm, ok := vmOf(hv3, string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(vm.GPU.Partition).To(BeTrue())
	g.Expect(vm.GPU.GuestControlledCacheTypes).To(BeTrue())
	freeOnHV3(nil)

	second := f.addMachine(t, "win-gpu-"+randSuffix(), "md-gpu", userData, spec)
	waiting := second.waitReason(t, infrav1.NoGPUAvailableReason)
	g.Expect(condition(waiting.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(And(
		ContainSubstring("none of the 3 available hosts"), ContainSubstring("has a free GPU partition"), ContainSubstring("status.hosts[].gpu")))
	_, made := vmOf(hv3, string(waiting.UID))
	g.Expect(made).To(BeFalse())

	g.Expect(k8s.Delete(ctx, first.hvm)).To(Succeed())
	g.Expect(second.waitReason(t, infrav1.WaitingForAddressesReason).Status.VM.Host).To(Equal("hv3"))

	// Deleting the second gives the partition back, and leaves hv3 as the test found it.
	g.Expect(k8s.Delete(ctx, second.hvm)).To(Succeed())
	freeOnHV3(&infrav1.HyperVHostGPUStatus{FreePartitions: 1})
}
