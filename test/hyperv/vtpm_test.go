package hyperv_test

import (
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestVTPM: a machine with vTPM whose first create breaks after New-VM. The second create finishes
// the VM with one local key protector and its TPM on, before the VM is marked complete and started;
// status.security reports the TPM with the generation 2 VM's EFI firmware and Secure Boot.
func TestVTPM(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv2"
	spec.VTPM = true
	h := host("hv2")
	before := h.Ops()["create"]
	h.CutCreates(1)
	t.Cleanup(func() { h.CutCreates(0) })
	mc := f.addMachine(t, "win-vtpm-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(h.Ops()["create"] - before).To(Equal(2))

	vm, ok := vmOf(h, string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(vm.TPM).To(BeTrue())
	g.Expect(vm.KeyProtectors).To(Equal(1))
	g.Expect(mc.get(g).Status.Security).To(Equal(infrav1.SecurityStatus{Firmware: infrav1.FirmwareEFI, SecureBoot: true, TPM: true}))
}
