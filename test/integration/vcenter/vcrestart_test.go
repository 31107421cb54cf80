package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestVCenterRestartMidClone: vCenter's service restarts while a clone task is in flight. The
// clone's answer, the manager's session and the task itself are lost (the clone still ends);
// the machine is not cloned twice and converges on the VM of the first clone.
func TestVCenterRestartMidClone(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	name := "win-md-0-vcrestart-" + randSuffix()
	f.addMachine(t, name, userData, defaultSpec())
	var task string
	g.Eventually(func(g Gomega) {
		task = f.get(g).Status.Task
		g.Expect(task).To(HavePrefix("task-"))
	}, 20*time.Second, 5*time.Millisecond).Should(Succeed())
	g.Expect(endpoint.Restart(ctx, 1500*time.Millisecond)).To(Succeed())
	c := vc(g)
	var info mo.Task
	err := property.DefaultCollector(c).RetrieveOne(ctx, types.ManagedObjectReference{Type: "Task", Value: task}, []string{"info.state"}, &info)
	g.Expect(fault.Is(err, &types.ManagedObjectNotFound{})).To(BeTrue(), "the clone task is forgotten: %v", err)

	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(faults.clones(name)).To(HaveLen(1), "clone requests sent")
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
	guestSets(g, c, vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": "10.0.0.33"})
	m = f.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
}
