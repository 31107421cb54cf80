package hyperv_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/scenario"
)

// userData is the bootstrap data of the suite's Windows machines, the shared scenarios' own.
var userData = scenario.UserData

// TestLifecycle: the shared scenario (scenario.Lifecycle) on the simulated hosts, with what only
// Hyper-V has, checked once the machine is created: a VM on a differencing disk with the
// default hardware, Secure Boot and one NIC on the suite's switch; the providerID naming host and
// VM; the config drive with the user data and a network config naming the VM's MAC. Deleted, no
// disk or drive of the machine is left on its host.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	var (
		h   *hypervsim.Host
		uid string
	)
	scenario.Lifecycle(t, hypervMachines{}, func(g Gomega, handle scenario.Handle) {
		m := handle.(*hypervMachine).mc.get(g)
		var vm hypervsim.VM
		h, vm = handle.(*hypervMachine).vm(g)
		uid = string(m.UID)
		g.Expect(vm.Processors).To(BeEquivalentTo(2))
		g.Expect(vm.MemoryBytes).To(BeEquivalentTo(4096 << 20))
		g.Expect(vm.SecureBoot).To(BeTrue())
		g.Expect(vm.SecureBootTemplate).To(Equal("MicrosoftWindows"))
		g.Expect(vm.NestedVirtualization).To(BeFalse())
		g.Expect(vm.Disk).To(Equal(hyperv.DefaultDiskPath + `\` + string(m.UID) + ".vhdx"))
		g.Expect(vm.NICs).To(HaveLen(1))
		g.Expect(vm.NICs[0].Switch).To(Equal(vswitch))
		g.Expect(m.Spec.ProviderID).To(Equal("hyperv://" + h.Name + "/" + vm.ID))
		files, err := readDrive(h, vm)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(files["user-data"]).To(Equal(scenario.UserData))
		g.Expect(strings.ToLower(string(files["network-config"]))).To(ContainSubstring(strings.ToLower(hyperv.MAC(string(m.UID), 0))))
	})
	for _, p := range h.Files() {
		NewWithT(t).Expect(p).NotTo(ContainSubstring(strings.ToLower(uid)))
	}
}

// TestNestedVirtualization: nestedVirtualization (for Hyper-V isolated containers) reaches the
// host at create: the VM exposes the processor's virtualization extensions, with static memory.
func TestNestedVirtualization(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.NestedVirtualization = true
	mc := f.addMachine(t, "win-md-0-nested-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Spec.NestedVirtualization).To(BeTrue())
	vm, ok := vmOf(host(m.Status.VM.Host), string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(vm.NestedVirtualization).To(BeTrue())
	g.Expect(vm.DynamicMemory).To(BeFalse())
	g.Expect(vm.State).To(Equal("Running"))
}

// TestLinuxControlPlane: the shared scenario (scenario.LinuxControlPlane), then what only Hyper-V
// has: the VM boots with the UEFI CA Secure Boot template and its NICs are named eth0....
func TestLinuxControlPlane(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	m := scenario.LinuxControlPlane(t, hypervMachines{}).(*hypervMachine)
	h, vm := m.vm(g)
	g.Expect(vm.SecureBootTemplate).To(Equal("MicrosoftUEFICertificateAuthority"))
	files, err := readDrive(h, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(files["network-config"])).To(ContainSubstring("set-name: eth0"))
}
