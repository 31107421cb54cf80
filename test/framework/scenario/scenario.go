// Package scenario holds machine scenarios written once and run by both providers' integration
// suites (test/integration/vcenter on vcsim, test/integration/hyperv on the simulated hosts).
// Each suite lends a scenario its own fixtures through a Provider; what only one hypervisor has
// (a clone's extraConfig, a Hyper-V config drive) stays in that suite's test, after the scenario.
package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/internal/guestos"
)

// Machine is an infrastructure machine (VCenterMachine, HyperVMachine) as a scenario reads it.
type Machine struct {
	UID          string
	ComputerName string
	ProviderID   string
	Provisioned  bool // status.initialization.provisioned
	Addresses    []clusterv1.MachineAddress
	Conditions   []metav1.Condition
}

// Provider makes machines on a suite's simulator.
type Provider interface {
	// Client reads and writes the management cluster (not through a manager's cache).
	Client() client.Client
	// AddMachine creates a cluster whose infrastructure is provisioned and, in it, a Machine
	// named name with its bootstrap Secret (userData) and its infrastructure machine for os.
	AddMachine(t *testing.T, name string, os infrav1.OperatingSystem, userData []byte) Handle
}

// Handle is one machine a Provider made.
type Handle interface {
	// Wait waits until the VMProvisioned condition has reason (with the state that goes with it).
	Wait(t *testing.T, reason string) Machine
	// Get reads the machine now.
	Get(g Gomega) Machine
	// Metadata is the instance metadata the hypervisor hands the guest.
	Metadata(g Gomega) guest.Metadata
	// ReportAddress plays the guest's tools (VMware Tools, Hyper-V integration services)
	// reporting address ip.
	ReportAddress(g Gomega, ip string)
	// ReportBootstrap plays bootstrap.ps1 writing its status document (guestinfo, KVP).
	ReportBootstrap(g Gomega, status string)
	// VMs is the number of VMs of the machine's UID; PoweredOn tells whether its VM runs.
	VMs(g Gomega) int
	PoweredOn(g Gomega) bool
	// UserDataOnVM tells whether the bootstrap data (it holds the join token) is still on the VM
	// (guestinfo, the config drive).
	UserDataOnVM(g Gomega) bool
	// LinkNode plays CAPI linking the Machine to its Node (status.nodeRef).
	LinkNode(g Gomega, node string)
	// Delete deletes the infrastructure machine; Exists tells whether it is still there.
	Delete(g Gomega)
	Exists(g Gomega) bool
}

// Condition is the condition of type t, or the zero condition.
func Condition(conds []metav1.Condition, t string) metav1.Condition {
	for _, c := range conds {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// LinuxControlPlane: a Linux machine (a control-plane VM) keeps its Machine's name as host name
// (only Windows names are cut to 15 characters), is provisioned once its guest reports an address,
// becomes Ready, and has no BootstrapSucceeded condition (no Windows bootstrap reports to it).
// It returns the machine for the suite's own checks.
func LinuxControlPlane(t *testing.T, p Provider) Handle {
	t.Helper()
	g := NewWithT(t)
	name := unique("win-control-plane-long-name-")
	h := p.AddMachine(t, name, infrav1.OSLinux, []byte("#cloud-config\nruncmd: []\n"))
	m := h.Wait(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.ComputerName).To(Equal(name), "Linux names are not shortened")
	g.Expect(h.Metadata(g).LocalHostname).To(Equal(name))

	h.ReportAddress(g, "10.0.0.41")
	m = h.Wait(t, infrav1.ProvisionedReason)
	g.Expect(Condition(m.Conditions, infrav1.BootstrapSucceededCondition).Type).To(BeEmpty())
	g.Eventually(func(g Gomega) {
		g.Expect(Condition(h.Get(g).Conditions, infrav1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, settle, 50*time.Millisecond).Should(Succeed())
	return h
}

// Lifecycle walks one Windows machine from create to delete. Created, it waits for addresses:
// its VM runs, its computer name is at most 15 characters, and the metadata names the machine's
// UID and computer name. The guest reports an address and bootstrap progress: provisioned, with
// the address and the bootstrap step. The Node registers without a providerID and capwin sets it.
// CAPI links the Node and the guest reports success: BootstrapSucceeded and Ready, and the
// bootstrap data (it holds the join token) leaves the VM. Deleted, no VM is left. created, when
// set, runs the suite's own checks of the machine as created (hardware, disks, delivery).
func Lifecycle(t *testing.T, p Provider, created func(g Gomega, h Handle)) {
	t.Helper()
	g := NewWithT(t)
	k8s := p.Client()
	h := p.AddMachine(t, unique("win-md-0-lifecycle-"), infrav1.OSWindows, UserData)
	m := h.Wait(t, infrav1.WaitingForAddressesReason)
	g.Expect(len(m.ComputerName)).To(BeNumerically("<=", 15))
	g.Expect(m.ComputerName).To(HavePrefix("win-md-"))
	g.Expect(h.VMs(g)).To(Equal(1))
	g.Expect(h.PoweredOn(g)).To(BeTrue())
	md := h.Metadata(g)
	g.Expect(md.InstanceID).To(Equal(m.UID))
	g.Expect(md.LocalHostname).To(Equal(m.ComputerName))
	g.Expect(m.ProviderID).NotTo(BeEmpty())
	g.Expect(m.Provisioned).To(BeFalse())
	if created != nil {
		created(g, h)
	}

	// The guest boots: its tools report the address, the bootstrap script its progress.
	h.ReportAddress(g, "10.0.0.21")
	h.ReportBootstrap(g, `{"step":"containerd","state":"Running","message":"installing"}`)
	m = h.Wait(t, infrav1.ProvisionedReason)
	g.Expect(m.Provisioned).To(BeTrue())
	g.Expect(m.Addresses).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "10.0.0.21"}))
	g.Eventually(func(g Gomega) {
		b := Condition(h.Get(g).Conditions, infrav1.BootstrapSucceededCondition)
		g.Expect(b.Reason).To(Equal(infrav1.BootstrapRunningReason))
		g.Expect(b.Message).To(ContainSubstring("containerd"))
	}, settle, 50*time.Millisecond).Should(Succeed())

	// The Node registers without a providerID (no cloud provider): capwin sets it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: guestos.NodeName(m.ComputerName)}}
	g.Expect(k8s.Create(t.Context(), node)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(t.Context(), client.ObjectKeyFromObject(node), node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(m.ProviderID))
	}, settle, 50*time.Millisecond).Should(Succeed())

	// CAPI links the Node; the guest reports success; the bootstrap data leaves the VM.
	h.ReportBootstrap(g, `{"step":"done","state":"Succeeded"}`)
	h.LinkNode(g, node.Name)
	g.Eventually(func(g Gomega) {
		g.Expect(h.UserDataOnVM(g)).To(BeFalse())
		m := h.Get(g)
		g.Expect(Condition(m.Conditions, infrav1.BootstrapSucceededCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(Condition(m.Conditions, infrav1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, settle, 50*time.Millisecond).Should(Succeed())

	// Delete: the VM goes, then the machine (its finalizer removed).
	h.Delete(g)
	g.Eventually(h.Exists, settle, 50*time.Millisecond).Should(BeFalse())
	g.Expect(h.VMs(g)).To(BeZero())
}

// UserData is the bootstrap data of the scenarios' Windows machines (cloud-config in a
// multipart document, as the bootstrap provider writes it).
var UserData = []byte("Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/cloud-config\n\n#cloud-config\n--x--\n")

// settle is how long a scenario waits for the providers to act on a change. It bounds liveness,
// not speed: a suite runs its tests in parallel on shared simulators beside the other suites, and
// on a loaded machine the Hyper-V suite once took more than 10s to eject the config drive and
// report the machine Ready (loaded run of 893a6cc).
const settle = 30 * time.Second

// unique is prefix with a random suffix: the simulators are shared by a suite's parallel tests.
func unique(prefix string) string { return fmt.Sprintf("%s%06x", prefix, rand.Uint32()&0xffffff) }
