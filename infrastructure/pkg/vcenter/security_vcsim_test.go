package vcenter

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
)

// TestSecurityVcsim: a template made EFI is cloned with firmware efi, Secure Boot and a vTPM; the
// firmware check reads the template's (the clone goes ahead) and the clone has the vTPM. vcsim has
// no key provider and still accepts the vTPM (a real vCenter refuses it: TestVTPMKeyProviderFault
// covers those words), and its CloneVM_Task keeps neither the template's firmware nor the spec's
// firmware and boot options (TestCloneSpecSecurity checks the spec). A BIOS template asked for efi
// is refused before any clone.
func TestSecurityVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	dc, err := datacenter(ctx, sess, "DC0")
	g.Expect(err).NotTo(HaveOccurred())
	f := find.NewFinder(sess.Client).SetDatacenter(dc)
	tmpl, err := f.VirtualMachine(ctx, "DC0_C0_RP0_VM1")
	g.Expect(err).NotTo(HaveOccurred())
	reconfigure(g, tmpl, types.VirtualMachineConfigSpec{Firmware: "efi"})
	g.Expect(templates.MarkVM(ctx, tmpl)).To(Succeed())
	biosTemplate, err := f.VirtualMachine(ctx, "DC0_H0_VM1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(templates.MarkVM(ctx, biosTemplate)).To(Succeed())

	on := true
	spec := spec(withSecurity(infrav1.FirmwareEFI, &on, true))
	spec.Template = "DC0_C0_RP0_VM1"
	b, s, vm := cloneAndFind(t, sess, "win-tpm", "6c1f0b6e-0000-4000-8000-0000000000e1", spec)
	var props mo.VirtualMachine
	g.Expect(object.NewVirtualMachine(sess.Client, vmRef(vm.Ref.ID)).Properties(ctx, vmRef(vm.Ref.ID),
		[]string{"config.hardware.device"}, &props)).To(Succeed())
	g.Expect(object.VirtualDeviceList(props.Config.Hardware.Device).SelectByType((*types.VirtualTPM)(nil))).To(HaveLen(1))
	// vcsim's clone is BIOS (it keeps neither firmware); Find reports what the VM has, also once
	// the VM is made EFI with Secure Boot.
	g.Expect(vm.Security).To(Equal(infrav1.SecurityStatus{Firmware: infrav1.FirmwareBIOS, TPM: true}))
	reconfigure(g, object.NewVirtualMachine(sess.Client, vmRef(vm.Ref.ID)), types.VirtualMachineConfigSpec{Firmware: "efi"})
	reconfigure(g, object.NewVirtualMachine(sess.Client, vmRef(vm.Ref.ID)), types.VirtualMachineConfigSpec{
		BootOptions: &types.VirtualMachineBootOptions{EfiSecureBootEnabled: &on}})
	vm, err = b.Find(ctx, s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vm.Security).To(Equal(infrav1.SecurityStatus{Firmware: infrav1.FirmwareEFI, SecureBoot: true, TPM: true}))

	bios := spec.DeepCopy()
	bios.Template = "DC0_H0_VM1"
	b, s = vcsimMachine(t, sess, "win-bios", "6c1f0b6e-0000-4000-8000-0000000000e2", bios)
	_, err = b.Create(ctx, s, recorded{})
	g.Expect(err).To(MatchError(ContainSubstring(`template "DC0_H0_VM1" boots with bios firmware, not efi`)))
}

func reconfigure(g Gomega, vm *object.VirtualMachine, spec types.VirtualMachineConfigSpec) {
	task, err := vm.Reconfigure(context.Background(), spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(context.Background())).To(Succeed())
}
