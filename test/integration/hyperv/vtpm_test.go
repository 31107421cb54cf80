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
	spec := defaultSpec()
	spec.VTPM = true
	h, mc, m := createCutOnce(t, "win-vtpm-", spec)

	vm, ok := vmOf(h, string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(vm.TPM).To(BeTrue())
	g.Expect(vm.KeyProtectors).To(Equal(1))
	g.Expect(mc.get(g).Status.Security).To(Equal(infrav1.SecurityStatus{Firmware: infrav1.FirmwareEFI, SecureBoot: true, TPM: true}))
}
