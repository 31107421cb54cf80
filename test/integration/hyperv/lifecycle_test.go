package hyperv_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/guestos"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

var userData = []byte("Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/cloud-config\n\n#cloud-config\n--x--\n")

// TestLifecycle: one Windows machine from create to delete on the simulated hosts: a VM on a
// differencing disk with the config drive, powered on through a host job; addresses and bootstrap
// progress from the guest (KVP); providerID and Node link; the config drive ejected and deleted
// once the Node exists; delete leaves no VM, disk or drive.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	mc := f.addMachine(t, "win-md-0-life-"+randSuffix(), "", userData, defaultSpec())
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.VM.Host).NotTo(BeEmpty())
	h := host(m.Status.VM.Host)
	vm, ok := vmOf(h, string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(vm.State).To(Equal("Running"))
	g.Expect(vm.Processors).To(BeEquivalentTo(2))
	g.Expect(vm.MemoryBytes).To(BeEquivalentTo(4096 << 20))
	g.Expect(vm.SecureBoot).To(BeTrue())
	g.Expect(vm.SecureBootTemplate).To(Equal("MicrosoftWindows"))
	g.Expect(vm.NestedVirtualization).To(BeFalse())
	g.Expect(vm.Disk).To(Equal(hyperv.DefaultDiskPath + `\` + string(m.UID) + ".vhdx"))
	g.Expect(vm.NICs).To(HaveLen(1))
	g.Expect(vm.NICs[0].Switch).To(Equal(vswitch))
	g.Expect(m.Spec.ProviderID).To(Equal("hyperv://" + h.Name + "/" + vm.ID))

	// The config drive carries the user data and the instance metadata.
	g.Expect(vm.DVDs).To(HaveLen(1))
	files, err := wire.ReadConfigDrive(h.File(vm.DVDs[0]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files["user-data"]).To(Equal(userData))
	var md guest.Metadata
	g.Expect(yaml.Unmarshal(files["meta-data"], &md)).To(Succeed())
	g.Expect(md.InstanceID).To(Equal(string(m.UID)))
	g.Expect(md.LocalHostname).To(Equal(m.Status.ComputerName))
	g.Expect(strings.ToLower(string(files["network-config"]))).To(ContainSubstring(strings.ToLower(hyperv.MAC(string(m.UID), 0))))

	// The guest boots: integration services report an address (and a link-local one, ignored)
	// and the bootstrap script its progress.
	g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) {
		v.Heartbeat = true
		v.NICs[0].IPs = []string{"10.2.0.5", "fe80::5"}
		v.KVP["capwin.bootstrap.status"] = `{"step":"join","state":"Running","message":"joining"}`
	})).To(Succeed())
	m = mc.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(m.Status.Addresses).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "10.2.0.5"}))
	g.Expect(m.Status.Addresses).NotTo(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "fe80::5"}))
	g.Eventually(func(g Gomega) {
		c := condition(mc.get(g).Status.Conditions, infrav1.BootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(infrav1.BootstrapRunningReason))
		g.Expect(c.Message).To(ContainSubstring("join"))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// The Node registers without a providerID: capwin sets it; CAPI links the Node; the config
	// drive (it holds the join token) leaves the VM and the host.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: guestos.NodeName(m.Status.ComputerName)}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(ctx, node) })
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	mc.m.Status.NodeRef = clusterv1.MachineNodeReference{Name: node.Name}
	g.Expect(k8s.Status().Update(ctx, mc.m)).To(Succeed())
	iso := vm.DVDs[0]
	g.Eventually(func(g Gomega) {
		v, _ := vmOf(h, string(m.UID))
		g.Expect(v.DVDs).To(BeEmpty())
		g.Expect(h.File(iso)).To(BeNil())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// Delete: off, removed, disk and folder gone.
	g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	_, ok = vmOf(h, string(m.UID))
	g.Expect(ok).To(BeFalse())
	for _, p := range h.Files() {
		g.Expect(p).NotTo(ContainSubstring(strings.ToLower(string(m.UID))))
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

// TestLinuxControlPlane: a Linux VM keeps the Machine name as host name, boots with the UEFI CA
// Secure Boot template, names its NICs eth0..., and reports no BootstrapSucceeded.
func TestLinuxControlPlane(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.OS = infrav1.OSLinux
	name := "win-control-plane-long-name-" + randSuffix()
	mc := f.addMachine(t, name, "", []byte("#cloud-config\nruncmd: []\n"), spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.ComputerName).To(Equal(name))
	h := host(m.Status.VM.Host)
	vm, ok := vmOf(h, string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(vm.SecureBootTemplate).To(Equal("MicrosoftUEFICertificateAuthority"))
	files, err := readDrive(h, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(files["network-config"])).To(ContainSubstring("set-name: eth0"))
	g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) { v.Heartbeat, v.NICs[0].IPs = true, []string{"10.2.0.9"} })).To(Succeed())
	m = mc.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(condition(m.Status.Conditions, infrav1.BootstrapSucceededCondition).Type).To(BeEmpty())
}
