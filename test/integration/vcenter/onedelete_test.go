package vcenter_test

import (
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// TestDeleteOfARunningVMEndsInOneReconcile: a VCenterMachine whose VM runs is gone after one
// reconcile of its delete. The reconcile waits for its power-off and destroy tasks (vcsim's end
// at once) instead of leaving each to the next reconcile, which CAPI's per-object rate limit
// holds back a second: the old VMs of a rollout went in three reconciles, 2.6 s each.
func TestDeleteOfARunningVMEndsInOneReconcile(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r, f, calls, m := runningVM(t, "onedelete", "win-md-0-onedelete-"+randSuffix())
	uid := string(m.UID)
	g.Expect(vmsWithUUID(g, vc(g), uid)).To(HaveLen(1))

	g.Expect(r.Client.Delete(ctx, m)).To(Succeed())
	_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
	g.Expect(err).NotTo(HaveOccurred())
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the VCenterMachine is gone after one reconcile (%v)", err)
	g.Expect(vmsWithUUID(g, vc(g), uid)).To(BeEmpty())
	g.Expect(calls.Snapshot()).To(HaveKey("PowerOffVM_Task"))
	g.Expect(calls.Snapshot()).To(HaveKey("Destroy_Task"))
}

// runningVM creates a machine of the default spec whose watch-filter value filter no manager
// takes, and reconciles it by hand until its VM runs; calls counts the reconciler's vSphere calls.
func runningVM(t *testing.T, filter, name string) (*machine.Reconciler, *fixture, *vcsimops.Calls, *infrav1.VCenterMachine) {
	t.Helper()
	f := newCluster(t, filter)
	f.addMachine(t, name, userData, defaultSpec())
	calls := &vcsimops.Calls{}
	r := manualReconciler(NewWithT(t), filter, calls)
	m := reconcileUntil(t, r, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	return r, f, calls, m
}
