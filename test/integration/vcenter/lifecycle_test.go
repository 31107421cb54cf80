package vcenter_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/scenario"
)

// userData is the bootstrap data of the suite's Windows machines, the shared scenarios' own.
var userData = scenario.UserData

func gunzipBase64(g Gomega, s string) []byte {
	raw, err := base64.StdEncoding.DecodeString(s)
	g.Expect(err).NotTo(HaveOccurred())
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	g.Expect(err).NotTo(HaveOccurred())
	out, err := io.ReadAll(zr)
	g.Expect(err).NotTo(HaveOccurred())
	return out
}

// TestLifecycle: the shared scenario (scenario.Lifecycle) on vcsim, with what only a vCenter
// clone has, checked once the machine is created: the VM's name, hardware and disks (a data disk
// created by the clone beside the grown template disk, reported in status), the user data and
// metadata in guestinfo with their encodings, the VM's ID and providerID.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	p := vcenterMachines{spec: func(s *infrav1.VCenterMachineSpec) {
		s.StoragePolicy = "vSAN Default Storage Policy"
		s.DataDisks = []infrav1.VCenterDataDisk{{Name: "containerd", SizeGiB: 8, Provisioning: infrav1.DiskThin}}
	}}
	scenario.Lifecycle(t, p, func(g Gomega, h scenario.Handle) {
		m := h.(vcenterMachine).f.get(g)
		_, vm := h.(vcenterMachine).vm(g)
		g.Expect(m.Finalizers).To(ContainElement("infrastructure.cluster.x-k8s.io/vcentermachine"))
		g.Expect(vm.Name).To(Equal(m.Name))
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
		g.Expect(gunzipBase64(g, ec["guestinfo.userdata"])).To(Equal(scenario.UserData))
		g.Expect(ec["guestinfo.metadata.encoding"]).To(Equal("base64"))
		g.Expect(m.Status.VM.ID).To(Equal(vm.Self.Value))
		g.Expect(m.Spec.ProviderID).To(Equal("vsphere://" + vm.Config.Uuid))
	})
}

// TestLinuxControlPlane: the shared scenario (scenario.LinuxControlPlane) on vcsim.
func TestLinuxControlPlane(t *testing.T) {
	t.Parallel()
	scenario.LinuxControlPlane(t, vcenterMachines{})
}
