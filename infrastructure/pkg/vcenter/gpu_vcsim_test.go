package vcenter

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// TestPCIDevicesVcsim: the cloned VM carries the spec's DirectPath I/O and vGPU devices with their
// backings. vcsim has no GPU: it neither checks that a host has the device or profile nor that the
// memory is reserved when the VM powers on, and its CloneVM_Task keeps only the NICs, disks and
// devices of the config spec, not memoryReservationLockedToMax (TestCloneSpecPCIDevices checks the
// spec sets it; docs/gpus.md, vCenter, says what an operator verifies on a real host).
func TestPCIDevicesVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	s := spec(withGPUs)
	s.Template = "DC0_H0_VM0"
	_, _, vm := cloneAndFind(t, sess, "win-gpu", "6c1f0b6e-0000-4000-8000-0000000000f1", s)
	var props mo.VirtualMachine
	g.Expect(object.NewVirtualMachine(sess.Client, vmRef(vm.Ref.ID)).Properties(ctx, vmRef(vm.Ref.ID),
		[]string{"config.hardware.device"}, &props)).To(Succeed())
	var backings []types.BaseVirtualDeviceBackingInfo
	for _, d := range object.VirtualDeviceList(props.Config.Hardware.Device).SelectByType((*types.VirtualPCIPassthrough)(nil)) {
		backings = append(backings, d.GetVirtualDevice().Backing)
	}
	g.Expect(backings).To(Equal([]types.BaseVirtualDeviceBackingInfo{
		&types.VirtualPCIPassthroughDynamicBackingInfo{
			AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{{VendorId: 0x10de, DeviceId: 0x1eb8}}, CustomLabel: "t4"},
		&types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: "grid_t4-4q"},
	}))
}
