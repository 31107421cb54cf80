package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestForeignVMNotAdopted points a new VCenterMachine at a VM capwin did not create for it:
// through spec.providerID (the VM has no owner mark, or another object's) and through status.
// The machine shows VMNotOwned, the VM is neither powered on nor reconfigured, and deleting the
// machine leaves the VM where it is.
func TestForeignVMNotAdopted(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mark, msg string
		status    bool
	}{
		"providerID, no mark":         {msg: "no capwin.owner mark"},
		"providerID, another's mark":  {mark: "other/win-md-0-other-k2v7p/6c1f", msg: `mark is "other/win-md-0-other-k2v7p/6c1f"`},
		"status.vm names another's":   {status: true, mark: "other/win-md-0-other-k2v7p/6c1f", msg: "found by status.vm.id"},
		"providerID, same name other": {mark: "elsewhere/win-md-0-foreign-same/6c1f", msg: "not this object's"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := vc(g)
			foreign := foreignVM(g, c, "foreign-"+randSuffix(), tc.mark)
			filter := watchFilter
			if tc.status {
				filter = "owner"
			}
			f := newCluster(t, filter)
			spec := defaultSpec()
			if !tc.status {
				spec.ProviderID = "vsphere://" + foreign.Config.Uuid
			}
			f.addMachine(t, "win-md-0-foreign-same", userData, spec)
			var m *infrav1.VCenterMachine
			if tc.status {
				// status is written by capwin only, but is no proof of ownership either.
				g.Eventually(func(g Gomega) {
					m := f.get(g)
					m.Status.VM = infrav1.VMReference{ID: foreign.Self.Value, InstanceUUID: foreign.Config.InstanceUuid}
					g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
				}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
				r := manualReconciler(g, filter, nil)
				m = reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
					return condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Reason == infrav1.VMNotOwnedReason
				})
			} else {
				m = f.waitReason(t, infrav1.VMNotOwnedReason)
			}
			msg := condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message
			g.Expect(msg).To(ContainSubstring(foreign.Self.Value))
			g.Expect(msg).To(ContainSubstring(tc.msg))
			untouched := func(g Gomega) {
				now := readVM(g, c, foreign.Self)
				g.Expect(now.Runtime.PowerState).To(Equal(foreign.Runtime.PowerState))
				g.Expect(now.Config.ChangeVersion).To(Equal(foreign.Config.ChangeVersion), "reconfigured")
			}
			g.Consistently(untouched, time.Second, 100*time.Millisecond).Should(Succeed())
			g.Expect(m.Spec.ProviderID).To(Equal(spec.ProviderID))
			g.Expect(vmsWithUUID(g, c, string(m.UID))).To(BeEmpty())

			g.Expect(k8s.Delete(ctx, m)).To(Succeed())
			if tc.status {
				r := manualReconciler(g, filter, nil)
				g.Eventually(func(g Gomega) {
					_, _ = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)})
					g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(m), &infrav1.VCenterMachine{}))).To(BeTrue())
				}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
			} else {
				g.Eventually(func() bool {
					return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(m), &infrav1.VCenterMachine{}))
				}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
			}
			untouched(g)
		})
	}
}

// foreignVM clones the template the way someone else than capwin would, powered off, with an
// owner mark when mark is not empty.
func foreignVM(g Gomega, c *vim25.Client, name, mark string) mo.VirtualMachine {
	finder := find.NewFinder(c, true)
	dc, err := finder.Datacenter(ctx, "DC0")
	g.Expect(err).NotTo(HaveOccurred())
	finder.SetDatacenter(dc)
	tmpl, err := finder.VirtualMachine(ctx, templateVM)
	g.Expect(err).NotTo(HaveOccurred())
	pool, err := finder.ResourcePool(ctx, "/DC0/host/DC0_H0/Resources")
	g.Expect(err).NotTo(HaveOccurred())
	folders, err := dc.Folders(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	poolRef := pool.Reference()
	cfg := &types.VirtualMachineConfigSpec{}
	if mark != "" {
		cfg.ExtraConfig = []types.BaseOptionValue{&types.OptionValue{Key: "capwin.owner", Value: mark}}
	}
	task, err := tmpl.Clone(ctx, folders.VmFolder, name, types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &poolRef}, Config: cfg})
	g.Expect(err).NotTo(HaveOccurred())
	info, err := task.WaitForResult(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	return readVM(g, c, info.Result.(types.ManagedObjectReference))
}
