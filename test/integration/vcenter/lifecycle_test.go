package vcenter_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/internal/guestos"
)

var userData = []byte("Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/cloud-config\n\n#cloud-config\n--x--\n")

func gunzipBase64(g Gomega, s string) []byte {
	raw, err := base64.StdEncoding.DecodeString(s)
	g.Expect(err).NotTo(HaveOccurred())
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	g.Expect(err).NotTo(HaveOccurred())
	out, err := io.ReadAll(zr)
	g.Expect(err).NotTo(HaveOccurred())
	return out
}

// TestLifecycle walks one Windows machine from create to delete through the real apiserver and
// vcsim: clone with the right identity, hardware and guestinfo; addresses from the guest;
// providerID and Node link; guest bootstrap report; user data cleared after the Node; delete.
// Its data disk is created by the clone beside the grown template disk and reported in status.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.StoragePolicy = "vSAN Default Storage Policy"
	spec.DataDisks = []infrav1.VCenterDataDisk{{Name: "containerd", SizeGiB: 8, Provisioning: infrav1.DiskThin}}
	f.addMachine(t, "win-md-0-lifecycle-"+randSuffix(), userData, spec)
	c := vc(g)

	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Finalizers).To(ContainElement("infrastructure.cluster.x-k8s.io/vcentermachine"))
	g.Expect(len(m.Status.ComputerName)).To(BeNumerically("<=", 15))
	g.Expect(m.Status.ComputerName).To(HavePrefix("win-md-"))
	vms := vmsWithUUID(g, c, string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	vm := vms[0]
	g.Expect(vm.Name).To(Equal(m.Name))
	g.Expect(vm.Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOn))
	g.Expect(vm.Config.Hardware.NumCPU).To(BeEquivalentTo(2))
	g.Expect(vm.Config.Hardware.MemoryMB).To(BeEquivalentTo(4096))
	disks := map[int32]int64{} // unit -> KiB
	for _, d := range vm.Config.Hardware.Device {
		if disk, ok := d.(*types.VirtualDisk); ok {
			disks[*disk.UnitNumber] = disk.CapacityInKB
		}
	}
	g.Expect(disks).To(Equal(map[int32]int64{0: 40 * 1024 * 1024, 1: 8 * 1024 * 1024}), "devices: %s", deviceNames(vm))
	g.Expect(m.Status.DataDisks).To(Equal([]infrav1.DataDiskStatus{{Name: "containerd", Target: 1, LUN: 0}}))
	ec := extraConfig(vm)
	g.Expect(ec["guestinfo.userdata.encoding"]).To(Equal("gzip+base64"))
	g.Expect(gunzipBase64(g, ec["guestinfo.userdata"])).To(Equal(userData))
	g.Expect(ec["guestinfo.metadata.encoding"]).To(Equal("base64"))
	md, err := base64.StdEncoding.DecodeString(ec["guestinfo.metadata"])
	g.Expect(err).NotTo(HaveOccurred())
	var meta guest.Metadata
	g.Expect(yaml.Unmarshal(md, &meta)).To(Succeed())
	g.Expect(meta.InstanceID).To(Equal(string(m.UID)))
	g.Expect(meta.LocalHostname).To(Equal(m.Status.ComputerName))
	g.Expect(m.Status.VM.ID).To(Equal(vm.Self.Value))
	g.Expect(m.Spec.ProviderID).To(Equal("vsphere://" + vm.Config.Uuid))
	g.Expect(ptr.Deref(m.Status.Initialization.Provisioned, false)).To(BeFalse())

	// The guest boots: VMware Tools reports the IP, the bootstrap script its progress.
	guestSets(g, c, vm.Self, map[string]string{
		"SET.guest.ipAddress":               "10.0.0.21",
		"guestinfo.capwin.bootstrap.status": `{"step":"containerd","state":"Running","message":"installing","logTail":"..."}`,
	})
	m = f.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(ptr.Deref(m.Status.Initialization.Provisioned, false)).To(BeTrue())
	g.Expect(m.Status.Provisioning.State).To(Equal(infrav1.StateProvisioned))
	g.Expect(m.Status.Addresses).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "10.0.0.21"}))
	g.Eventually(func(g Gomega) {
		b := condition(f.get(g).Status.Conditions, infrav1.BootstrapSucceededCondition)
		g.Expect(b.Reason).To(Equal(infrav1.BootstrapRunningReason))
		g.Expect(b.Message).To(ContainSubstring("containerd"))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// The node registers without a providerID (no cloud provider): capwin sets it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: guestos.NodeName(m.Status.ComputerName)}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(ctx, node) })
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// CAPI links the Node; the guest reports success; the user data leaves the VM config.
	guestSets(g, c, vm.Self, map[string]string{"guestinfo.capwin.bootstrap.status": `{"step":"done","state":"Succeeded"}`})
	f.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: node.Name}
	g.Expect(k8s.Status().Update(ctx, f.machine)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ec := extraConfig(readVM(g, c, vm.Self))
		g.Expect(ec).NotTo(HaveKey("guestinfo.userdata"))
		g.Expect(ec).NotTo(HaveKey("guestinfo.userdata.encoding"))
		g.Expect(ec).To(HaveKey("guestinfo.metadata"))
		m := f.get(g)
		g.Expect(condition(m.Status.Conditions, infrav1.BootstrapSucceededCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(condition(m.Status.Conditions, infrav1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(m.Status.Task).To(BeEmpty())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// Delete: power off, destroy, finalizer gone, no VM left.
	g.Expect(k8s.Delete(ctx, f.vm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(BeEmpty())
}

// TestLinuxControlPlane: a Linux VM (control plane, CABPK data) keeps its long Machine name as
// hostname, reports no BootstrapSucceeded, and is Ready once provisioned.
func TestLinuxControlPlane(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.OS = infrav1.OSLinux
	name := "win-control-plane-long-name-" + randSuffix()
	f.addMachine(t, name, []byte("#cloud-config\nruncmd: []\n"), spec)
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.ComputerName).To(Equal(name), "Linux names are not shortened")
	c := vc(g)
	vms := vmsWithUUID(g, c, string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	raw, err := base64.StdEncoding.DecodeString(extraConfig(vms[0])["guestinfo.metadata"])
	g.Expect(err).NotTo(HaveOccurred())
	var md guest.Metadata
	g.Expect(yaml.Unmarshal(raw, &md)).To(Succeed())
	g.Expect(md.LocalHostname).To(Equal(name))

	guestSets(g, c, vms[0].Self, map[string]string{"SET.guest.ipAddress": "10.0.0.41"})
	m = f.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(condition(m.Status.Conditions, infrav1.BootstrapSucceededCondition).Type).To(BeEmpty())
	g.Eventually(func(g Gomega) {
		g.Expect(condition(f.get(g).Status.Conditions, infrav1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}
