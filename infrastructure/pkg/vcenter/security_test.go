package vcenter

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

func withSecurity(firmware infrav1.Firmware, secureBoot *bool, vTPM bool) func(*infrav1.VCenterMachineSpec) {
	return func(s *infrav1.VCenterMachineSpec) { s.Firmware, s.SecureBoot, s.VTPM = firmware, secureBoot, vTPM }
}

// addedTPMs are the VirtualTPM devices a clone spec adds, by key.
func addedTPMs(cs types.VirtualMachineCloneSpec) []int32 {
	var keys []int32
	for _, c := range cs.Config.DeviceChange {
		if spec := c.GetVirtualDeviceConfigSpec(); spec.Operation == types.VirtualDeviceConfigSpecOperationAdd {
			if tpm, ok := spec.Device.(*types.VirtualTPM); ok {
				keys = append(keys, tpm.Key)
			}
		}
	}
	return keys
}

// TestCloneSpecSecurity: an EFI template cloned with firmware efi, Secure Boot and a vTPM gets the
// three in its config spec, the vTPM with a key no data disk takes; unset fields leave the
// template's settings; a template with a vTPM gets no second one.
func TestCloneSpecSecurity(t *testing.T) {
	g := NewWithT(t)
	on := true
	place := scsiTemplate(0)
	place.Firmware = "efi"
	cs, err := cloneSpec(cloneInput{Spec: spec(func(s *infrav1.VCenterMachineSpec) {
		withSecurity(infrav1.FirmwareEFI, &on, true)(s)
		twoDisks(s)
	}), UID: "u", Place: place})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs.Config.Firmware).To(Equal("efi"))
	g.Expect(cs.Config.BootOptions).To(Equal(&types.VirtualMachineBootOptions{EfiSecureBootEnabled: &on}))
	g.Expect(addedTPMs(cs)).To(Equal([]int32{-5}), "after a NIC edit, a NIC removal and the data disks -1 and -2")

	cs, err = cloneSpec(cloneInput{Spec: spec(nil), UID: "u", Place: place})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs.Config.Firmware).To(BeEmpty())
	g.Expect(cs.Config.BootOptions).To(BeNil())
	g.Expect(addedTPMs(cs)).To(BeEmpty())

	place.Devices = append(place.Devices, &types.VirtualTPM{VirtualDevice: types.VirtualDevice{Key: 11000}})
	cs, err = cloneSpec(cloneInput{Spec: spec(withSecurity(infrav1.FirmwareEFI, nil, true)), UID: "u", Place: place})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addedTPMs(cs)).To(BeEmpty())
}

// TestCloneSpecFirmwareMismatch: a firmware other than the template's is refused as an invalid
// spec naming the template's firmware (a template without one is BIOS).
func TestCloneSpecFirmwareMismatch(t *testing.T) {
	for _, tc := range []struct {
		name, template string
		want           infrav1.Firmware
		says           string
	}{
		{"bios template to efi", "bios", infrav1.FirmwareEFI, `template "t" boots with bios firmware, not efi`},
		{"unset template to efi", "", infrav1.FirmwareEFI, `template "t" boots with bios firmware, not efi`},
		{"efi template to bios", "efi", infrav1.FirmwareBIOS, `template "t" boots with efi firmware, not bios`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			place := template()
			place.Firmware = tc.template
			_, err := cloneSpec(cloneInput{Spec: spec(withSecurity(tc.want, nil, false)), UID: "u", Place: place})
			var e *hypervisor.Error
			g.Expect(errors.As(err, &e)).To(BeTrue(), "%v", err)
			g.Expect(e.Reason).To(Equal(infrav1.InvalidSpecReason))
			g.Expect(e.Message).To(ContainSubstring(tc.says))
		})
	}
}

// TestVTPMKeyProviderFault: a clone of a machine with a vTPM that vCenter refuses for want of a key
// provider (vcsim never does: the fault is built here; its type is not one of its own) says so and
// what to do, keeping vCenter's message and the fault's name; the same fault for a machine without
// a vTPM keeps the fault's own words.
func TestVTPMKeyProviderFault(t *testing.T) {
	g := NewWithT(t)
	says := "Cannot apply encryption policy. You must set the default key provider."
	failure := types.LocalizedMethodFault{Fault: &types.InvalidVmConfig{}, LocalizedMessage: says}
	on := clone
	on.vtpm = true
	g.Expect(taskMessage(on, failure)).To(And(
		HavePrefix(clone.action+": VM win-md-0-x has a vTPM (spec.vTPM)"),
		ContainSubstring("add a Native or Standard key provider, make it the default"),
		ContainSubstring("Cryptographer privileges"),
		ContainSubstring("docs/vcenter/templates.md"),
		ContainSubstring("[vCenter: "+says+"]"),
		HaveSuffix("(vSphere fault InvalidVmConfig)")))
	g.Expect(taskMessage(clone, failure)).To(ContainSubstring("the configuration of VM win-md-0-x is not valid"))
	g.Expect(taskMessage(on, types.LocalizedMethodFault{Fault: &types.InvalidVmConfig{}, LocalizedMessage: "bad device"})).
		NotTo(ContainSubstring("key provider"), "other faults of a vTPM machine keep their words")
}
