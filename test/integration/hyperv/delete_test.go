package hyperv_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestDeleteOfARunningVMIsOneRemove: the delete of a running VM is one host operation, remove.ps1,
// which turns the VM off itself: no power-off job first and no reads of it. Before, the delete
// sent the power-off, read its job in the next reconcile and removed the VM in the one after, each
// held back by CAPI's per-object rate limit: 2.5 s per old VM in a rollout against 0.75 s on
// vCenter. A saved (suspended) VM is still turned off by a host job first. Not parallel: it counts
// the host's operations, which other tests' VMs would add to.
func TestDeleteOfARunningVMIsOneRemove(t *testing.T) {
	f := newCluster(t, nil)
	f.provisioned(t)
	for _, c := range []struct {
		state            string
		powerOps, remove int
	}{{"Running", 0, 1}, {"Saved", 1, 1}} {
		t.Run(c.state, func(t *testing.T) {
			g := NewWithT(t)
			mc := f.addMachine(t, "win-md-0-del-"+randSuffix(), "", userData, defaultSpec())
			m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
			h := host(m.Status.VM.Host)
			vm, ok := vmOf(h, string(m.UID))
			g.Expect(ok).To(BeTrue())
			g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) { v.State = c.state })).To(Succeed())

			before := h.Ops()
			g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
			}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
			after := h.Ops()
			_, ok = vmOf(h, string(m.UID))
			g.Expect(ok).To(BeFalse())
			g.Expect(after["remove"]-before["remove"]).To(Equal(c.remove), "remove operations")
			g.Expect(after["power"]-before["power"]).To(Equal(c.powerOps), "power operations")
			if c.powerOps == 0 {
				g.Expect(after["job"]-before["job"]).To(BeZero(), "job reads")
			}
		})
	}
}
