package vcenter_test

import (
	"encoding/base64"
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
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// TestIPAMRoundTrip: a static address from a CAPI IPAM pool. The machine waits for the claim,
// the VM is cloned powered off, the netplan metadata is written with the VM's MAC, the VM starts,
// and the claim is released when the machine goes.
func TestIPAMRoundTrip(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.Network = []infrav1.NetworkDevice{{
		NetworkName: "VM Network", Nameservers: []string{"10.0.0.2"},
		AddressesFromPools: []corev1.TypedLocalObjectReference{{APIGroup: ptr.To("ipam.cluster.x-k8s.io"), Kind: "InClusterIPPool", Name: "nodes"}},
	}}
	f.addMachine(t, "win-md-0-ipam-"+randSuffix(), userData, spec)
	f.waitReason(t, infrav1.WaitingForIPAddressesReason)

	// Play the IPAM provider.
	claimKey := client.ObjectKey{Namespace: f.ns, Name: f.vm.Name + "-0-0"}
	claim := &ipamv1.IPAddressClaim{}
	g.Eventually(func() error { return k8s.Get(ctx, claimKey, claim) }, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(claim.Spec.PoolRef.Name).To(Equal("nodes"))
	// The claim carries the machine's watch-filter label, else the manager (filter "suite") would
	// never see the IPAM provider bind it.
	g.Expect(claim.Labels).To(HaveKeyWithValue(clusterv1.WatchLabel, watchFilter))
	g.Expect(k8s.Create(ctx, &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: claimKey.Name},
		Spec: ipamv1.IPAddressSpec{ClaimRef: ipamv1.IPAddressClaimReference{Name: claimKey.Name}, PoolRef: claim.Spec.PoolRef,
			Address: "10.0.0.50", Prefix: ptr.To[int32](24), Gateway: "10.0.0.1"},
	})).To(Succeed())
	base := claim.DeepCopy()
	claim.Status.AddressRef.Name = claimKey.Name
	claim.Status.Conditions = []metav1.Condition{{Type: ipamv1.IPAddressClaimReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Patch(ctx, claim, client.MergeFrom(base))).To(Succeed())

	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	c := vc(g)
	vm := readVM(g, c, vmRef(m.Status.VM.ID))
	var mac string
	for _, d := range vm.Config.Hardware.Device {
		if nic, ok := d.(types.BaseVirtualEthernetCard); ok {
			mac = nic.GetVirtualEthernetCard().MacAddress
		}
	}
	raw, err := base64.StdEncoding.DecodeString(extraConfig(vm)["guestinfo.metadata"])
	g.Expect(err).NotTo(HaveOccurred())
	var md guest.Metadata
	g.Expect(yaml.Unmarshal(raw, &md)).To(Succeed())
	network, err := base64.StdEncoding.DecodeString(md.Network)
	g.Expect(err).NotTo(HaveOccurred())
	var np struct {
		Ethernets map[string]struct {
			Match       map[string]string   `json:"match"`
			Addresses   []string            `json:"addresses"`
			Routes      []map[string]string `json:"routes"`
			Nameservers map[string][]string `json:"nameservers"`
		} `json:"ethernets"`
	}
	g.Expect(yaml.Unmarshal(network, &np)).To(Succeed())
	e := np.Ethernets["id0"]
	g.Expect(e.Match["macaddress"]).To(Equal(guest.NormalizeMAC(mac)))
	g.Expect(e.Addresses).To(Equal([]string{"10.0.0.50/24"}))
	g.Expect(e.Routes).To(ContainElement(map[string]string{"to": "0.0.0.0/0", "via": "10.0.0.1"}))
	g.Expect(e.Nameservers["addresses"]).To(Equal([]string{"10.0.0.2"}))
	g.Expect(vm.Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOn))

	g.Expect(k8s.Delete(ctx, f.vm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, claimKey, &ipamv1.IPAddressClaim{})) &&
			apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(BeEmpty())
}

// TestMoveAdoptsVM plays clusterctl move: the VCenterMachine is re-created (new UID) with the
// same spec, providerID included; the existing VM is adopted by its BIOS UUID, not cloned again.
func TestMoveAdoptsVM(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	f.addMachine(t, "win-md-0-move-"+randSuffix(), userData, defaultSpec())
	f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Eventually(func(g Gomega) { g.Expect(f.get(g).Spec.ProviderID).NotTo(BeEmpty()) }, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	old := f.get(g)

	// Pause, as clusterctl move does, then delete the source object without running its
	// finalizer and create the moved copy.
	setPaused(g, f, true)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(f.get(g).Status.Conditions, "Paused").Status).To(Equal(metav1.ConditionTrue))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		orphan := f.get(g)
		orphan.Finalizers = nil
		g.Expect(k8s.Update(ctx, orphan)).To(Succeed())
		g.Expect(k8s.Delete(ctx, orphan)).To(Succeed())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(old), &infrav1.VCenterMachine{}))
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
	moved := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace, Labels: old.Labels,
		OwnerReferences: old.OwnerReferences}, Spec: old.Spec}
	g.Expect(k8s.Create(ctx, moved)).To(Succeed())
	setPaused(g, f, false)

	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.UID).NotTo(Equal(old.UID))
	g.Expect(m.Status.VM.ID).To(Equal(old.Status.VM.ID))
	c := vc(g)
	g.Expect(vmsWithUUID(g, c, string(old.UID))).To(HaveLen(1), "the VM keeps its instance UUID")
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(BeEmpty(), "no second VM")
}
