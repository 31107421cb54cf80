package hyperv_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestDataDisks: a machine with a dynamic and a fixed data disk, whose first create breaks after
// New-VM (the disk files exist, nothing is attached). The second create reuses the files and
// attaches them at SCSI 0:1 and 0:2 with the config drive at 0:3; status.dataDisks tells the
// guest's addresses (target 0, LUN 1 and 2); delete leaves no file of the machine.
func TestDataDisks(t *testing.T) {
	g := NewWithT(t)
	spec := defaultSpec()
	spec.DataDisks = []infrav1.HyperVDataDisk{{Name: "containerd", SizeGiB: 20}, {Name: "logs", SizeGiB: 2, Type: infrav1.DiskFixed}}
	h, mc, m := createCutOnce(t, "win-disks-", spec)
	uid := string(m.UID)
	g.Eventually(func(g Gomega) {
		g.Expect(mc.get(g).Status.DataDisks).To(Equal([]infrav1.DataDiskStatus{
			{Name: "containerd", Target: 0, LUN: 1}, {Name: "logs", Target: 0, LUN: 2}}))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	vm, ok := vmOf(h, uid)
	g.Expect(ok).To(BeTrue())
	dir := hyperv.DefaultVMPath + `\` + uid + `\`
	g.Expect(vm.DataDisks).To(Equal([]hypervsim.Drive{{Path: dir + "containerd.vhdx", Location: 1}, {Path: dir + "logs.vhdx", Location: 2}}))
	g.Expect(vm.DVDs).To(HaveLen(1))
	g.Expect(vm.DVDLocation).To(BeEquivalentTo(3))
	for path, want := range map[string]hypervsim.VHD{dir + "containerd.vhdx": {Type: "Dynamic", SizeBytes: 20 << 30}, dir + "logs.vhdx": {Type: "Fixed", SizeBytes: 2 << 30}} {
		d, ok := h.VHD(path)
		g.Expect(ok).To(BeTrue(), path)
		g.Expect(d).To(Equal(want), path)
	}

	g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	for _, p := range h.Files() {
		g.Expect(p).NotTo(ContainSubstring(strings.ToLower(uid)))
	}
	_, ok = h.VHD(dir + "logs.vhdx")
	g.Expect(ok).To(BeFalse())
}

// createCutOnce creates a machine of spec on host hv2 whose first create is cut right after
// New-VM, and waits until the second create finished the VM (exactly two creates).
func createCutOnce(t *testing.T, prefix string, spec infrav1.HyperVMachineSpec) (*hypervsim.Host, *machine, *infrav1.HyperVMachine) {
	t.Helper()
	f := newCluster(t, nil)
	f.provisioned(t)
	spec.Host = "hv2"
	h := host("hv2")
	before := h.Ops()["create"]
	h.CutCreates(1)
	t.Cleanup(func() { h.CutCreates(0) })
	mc := f.addMachine(t, prefix+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	NewWithT(t).Expect(h.Ops()["create"] - before).To(Equal(2))
	return h, mc, m
}
