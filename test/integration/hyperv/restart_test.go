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
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestLostCreateAnswer: the host creates the VM but its answer is lost. The host was recorded
// before the create was sent, so the next reconcile finds the VM there: one VM, one create.
func TestLostCreateAnswer(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv2"
	h := host("hv2")
	before := h.Ops()["create"]
	h.LoseAnswers("create", 1)
	mc := f.addMachine(t, "win-lost-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.VM.Host).To(Equal("hv2"))
	g.Consistently(func() int { return h.Ops()["create"] - before }, time.Second, 100*time.Millisecond).Should(Equal(1))
	n := 0
	for _, sh := range hosts {
		if _, ok := vmOf(sh.Host, string(m.UID)); ok {
			n++
		}
	}
	g.Expect(n).To(Equal(1))
}

// TestDiskFull: a host without space gives a clear condition and no VM; with space again the
// machine is created.
func TestDiskFull(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv3"
	h := host("hv3")
	h.SetFreeDisk(0)
	t.Cleanup(func() { h.SetFreeDisk(1 << 40) })
	mc := f.addMachine(t, "win-full-"+randSuffix(), "", userData, spec)
	g.Eventually(func(g Gomega) {
		c := condition(mc.get(g).Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.HypervisorErrorReason))
		g.Expect(c.Message).To(ContainSubstring("not enough space"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	_, ok := vmOf(h, string(mc.get(g).UID))
	g.Expect(ok).To(BeFalse())
	h.SetFreeDisk(1 << 40)
	mc.waitReason(t, infrav1.WaitingForAddressesReason)
}

// TestInterruptedCreate: the connection breaks after New-VM, leaving a VM without notes, network
// adapters or config drive. capwin does not start that VM: the next create finishes it on the
// same host, and the machine gets one fully configured VM.
func TestInterruptedCreate(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv2"
	h := host("hv2")
	before := h.Ops()["create"]
	h.CutCreates(1)
	t.Cleanup(func() { h.CutCreates(0) })
	mc := f.addMachine(t, "win-cut-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	uid := string(m.UID)
	g.Expect(h.Ops()["create"] - before).To(Equal(2))
	var mine []hypervsim.VM
	for _, sh := range hosts {
		for _, vm := range sh.VMs() {
			if strings.Contains(strings.ToLower(vm.Disk), strings.ToLower(uid)) || strings.Contains(vm.Notes, uid) {
				mine = append(mine, vm)
			}
		}
	}
	g.Expect(mine).To(HaveLen(1))
	vm := mine[0]
	g.Expect(vm.ID).To(Equal(m.Status.VM.ID))
	g.Expect(vm.Notes).To(Equal("capwin-uid:" + uid + "\ncapwin-owner:" + f.ns + "/" + m.Name + "\ncapwin-complete:" + uid))
	g.Expect(vm.NICs).To(HaveLen(1))
	g.Expect(vm.NICs[0].MAC).To(Equal(strings.ToUpper(strings.ReplaceAll(hyperv.MAC(uid, 0), ":", ""))))
	g.Expect(vm.SecureBoot).To(BeTrue())
	g.Expect(vm.DVDs).To(HaveLen(1))
	files, err := wire.ReadConfigDrive(h.File(vm.DVDs[0]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files["user-data"]).To(Equal(userData))
	g.Expect(vm.StartNotes).NotTo(BeEmpty())
	for _, notes := range vm.StartNotes {
		g.Expect(notes).To(ContainSubstring("capwin-complete:"+uid), "started before its create finished")
	}
	g.Expect(h.GuestAddress(vm.ID, "10.2.0.7")).To(Succeed())
	mc.waitReason(t, infrav1.ProvisionedReason)
}

// TestDeleteInterruptedCreate: a machine deleted while its VM is half-built (every create is cut)
// removes that VM, its disk and folder, and never starts it.
func TestDeleteInterruptedCreate(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv2"
	h := host("hv2")
	before := h.Ops()["create"]
	h.CutCreates(1000)
	t.Cleanup(func() { h.CutCreates(0) })
	mc := f.addMachine(t, "win-cutdel-"+randSuffix(), "", userData, spec)
	uid := string(mc.hvm.UID)
	halfBuilt := func() []hypervsim.VM {
		var out []hypervsim.VM
		for _, vm := range h.VMs() {
			if strings.Contains(strings.ToLower(vm.Disk), strings.ToLower(uid)) {
				out = append(out, vm)
			}
		}
		return out
	}
	g.Eventually(func() int { return h.Ops()["create"] - before }, 20*time.Second, 50*time.Millisecond).Should(BeNumerically(">=", 2))
	g.Consistently(func(g Gomega) {
		vms := halfBuilt()
		g.Expect(vms).To(HaveLen(1))
		g.Expect(vms[0].State).To(Equal("Off"))
		g.Expect(vms[0].StartNotes).To(BeEmpty())
	}, time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(mc.get(g).Spec.ProviderID).To(BeEmpty())

	g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(halfBuilt()).To(BeEmpty())
	for _, p := range h.Files() {
		g.Expect(p).NotTo(ContainSubstring(strings.ToLower(uid)))
	}
}

// TestWinRMRestartMidCreate: the host's WinRM service restarts while a create waits on the host
// (held before it applied). The create is lost with its shell; once WinRM listens again the
// machine is created once, on the host it was placed on, and gets its addresses. Only creates
// hang: the host's probes and lookups go on, so the create is held whatever the timing.
func TestWinRMRestartMidCreate(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv3"
	sh := hosts[2]
	before := sh.Ops()["create"]
	sh.HangOp("create")
	t.Cleanup(func() { sh.Hang(false) })
	mc := f.addMachine(t, "win-winrm-"+randSuffix(), "", userData, spec)
	g.Eventually(func() int { return sh.Held("create") }, 20*time.Second, 20*time.Millisecond).Should(BeNumerically(">=", 1))
	g.Eventually(func(g Gomega) {
		g.Expect(mc.get(g).Status.VM.Host).To(Equal("hv3"), "the host is recorded before the create is sent")
	}, 5*time.Second, 20*time.Millisecond).Should(Succeed())
	g.Expect(sh.srv.Restart(ctx, time.Second)).To(Succeed())
	sh.Hang(false)

	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.VM.Host).To(Equal("hv3"))
	g.Expect(sh.Ops()["create"] - before).To(Equal(1))
	n := 0
	for _, h := range hosts {
		if _, ok := vmOf(h.Host, string(m.UID)); ok {
			n++
		}
	}
	g.Expect(n).To(Equal(1))
	g.Expect(sh.GuestAddress(m.Status.VM.ID, "10.2.0.8")).To(Succeed())
	mc.waitReason(t, infrav1.ProvisionedReason)
}
