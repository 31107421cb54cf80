package hyperv_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
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
