package hyperv_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestVMNotOwnedIsLeftAlone: a HyperVMachine whose providerID names a VM capwin did not create
// for it (one an administrator made, one marked for another object) shows VMNotOwned; the VM is
// never started, changed or removed, and deleting the object leaves it.
func TestVMNotOwnedIsLeftAlone(t *testing.T) {
	t.Parallel()
	f := newCluster(t, nil)
	f.provisioned(t)
	other := "6f1c0a52-0d3e-4c71-9d7e-1b2a3c4d5e6f"
	for name, notes := range map[string]string{
		"unmarked":     "SQL server, ask the DBA team",
		"other object": "capwin-uid:" + other + "\ncapwin-owner:" + f.ns + "/someone-else\ncapwin-complete:" + other,
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			h := host("hv1")
			id := h.AddVM(hypervsim.VM{Name: "sql-" + randSuffix(), Notes: notes, Disk: `D:\sql\data.vhdx`,
				NICs: []hypervsim.NIC{{MAC: "00155D010203", Switch: vswitch}}})
			before := vmByID(h, id)
			spec := defaultSpec()
			spec.ProviderID = hyperv.ProviderID("hv1", id)
			mc := f.addMachine(t, "win-foreign-"+randSuffix(), "", userData, spec)
			m := mc.waitReason(t, infrav1.VMNotOwnedReason)
			g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(And(ContainSubstring(id), ContainSubstring("hv1")))
			g.Consistently(func() hypervsim.VM { return vmByID(h, id) }, time.Second, 100*time.Millisecond).Should(Equal(before))

			g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
			}, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
			g.Expect(vmByID(h, id)).To(Equal(before))
		})
	}
}

// TestMovedVMAdopted: after clusterctl move the HyperVMachine has a new UID and no status, only
// its providerID; the VM's notes name its namespace/name, so it is adopted (under the UID it was
// created with) and deleted with the object.
func TestMovedVMAdopted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	h := host("hv3")
	name, oldUID := "win-moved-"+randSuffix(), "0a9b8c7d-1111-4222-8333-944455566677"
	id := h.AddVM(hypervsim.VM{Name: name, Notes: "capwin-uid:" + oldUID + "\ncapwin-owner:" + f.ns + "/" + name + "\ncapwin-complete:" + oldUID,
		Disk: hyperv.DefaultDiskPath + `\` + oldUID + ".vhdx", NICs: []hypervsim.NIC{{MAC: "02AABBCCDDEE", Switch: vswitch}}})
	spec := defaultSpec()
	spec.ProviderID = hyperv.ProviderID("hv3", id)
	mc := f.addMachine(t, name, "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.VM).To(Equal(infrav1.VMReference{ID: id, Host: "hv3", InstanceUUID: oldUID}))
	g.Expect(vmByID(h, id).State).To(Equal("Running"))

	g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), &infrav1.HyperVMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(vmByID(h, id).ID).To(BeEmpty(), "the VM is removed")
}

// vmByID returns a copy of a simulated VM (zero when it does not exist).
func vmByID(h *hypervsim.Host, id string) hypervsim.VM {
	for _, vm := range h.VMs() {
		if vm.ID == id {
			return vm
		}
	}
	return hypervsim.VM{}
}
