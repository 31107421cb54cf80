package machine_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// TestFullCloneGrowsItsDiskInTheCloneTask: a full clone whose disk must grow (spec.diskGiB over
// the template's) is one task, the clone, that also powers the VM on: the disk is grown by the
// clone spec, not by a reconfigure after it (which cost a task and a reconcile on every new
// machine's path). The template's own disk keeps its size.
func TestFullCloneGrowsItsDiskInTheCloneTask(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	_, _, calls, m := runningVM(t, "clonegrow", "win-md-0-clonegrow-m2q7c")
	c := vc(g)
	vms := vmsWithUUID(g, c, string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	g.Expect(vms[0].Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOn))
	g.Expect(firstDiskKiB(vms[0])).To(BeEquivalentTo(40 * 1024 * 1024))
	tmpl, err := find.NewFinder(c).VirtualMachine(ctx, templateVM)
	g.Expect(err).NotTo(HaveOccurred())
	var tm mo.VirtualMachine
	g.Expect(tmpl.Properties(ctx, tmpl.Reference(), []string{"config"}, &tm)).To(Succeed())
	g.Expect(firstDiskKiB(tm)).To(BeEquivalentTo(10*1024*1024), "the template's disk is not grown")
	got := calls.Snapshot()
	g.Expect(got).To(HaveKeyWithValue("CloneVM_Task", 1))
	g.Expect(got).NotTo(HaveKey("ReconfigVM_Task"))
	g.Expect(got).NotTo(HaveKey("PowerOnVM_Task"))
	t.Logf("vSphere calls of the create: %v", got)
}

func firstDiskKiB(vm mo.VirtualMachine) int64 {
	for _, d := range vm.Config.Hardware.Device {
		if disk, ok := d.(*types.VirtualDisk); ok {
			return disk.CapacityInKB
		}
	}
	return 0
}
