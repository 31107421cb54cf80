package hyperv

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

func TestDataDiskInputs(t *testing.T) {
	g := NewWithT(t)
	disks, dvd := dataDiskInputs(nil)
	doc, err := json.Marshal(wire.CreateInput{DataDisks: disks, ConfigDriveLocation: dvd})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(doc)).To(ContainSubstring(`"dataDisks":[],`), "an empty list, never null, for the script")
	g.Expect(dvd).To(BeEquivalentTo(1), "without data disks the config drive follows the OS disk")

	disks, dvd = dataDiskInputs([]infrav1.HyperVDataDisk{
		{Name: "containerd", SizeGiB: 100},
		{Name: "logs", SizeGiB: 2, Type: infrav1.DiskFixed},
	})
	g.Expect(disks).To(Equal([]wire.DataDiskInput{
		{Name: "containerd", SizeBytes: 100 << 30, Type: "Dynamic", Location: 1},
		{Name: "logs", SizeBytes: 2 << 30, Type: "Fixed", Location: 2},
	}))
	g.Expect(dvd).To(BeEquivalentTo(3))
}

func TestObserveDataDisks(t *testing.T) {
	spec := []infrav1.HyperVDataDisk{{Name: "containerd", SizeGiB: 1}, {Name: "logs", SizeGiB: 1}}
	scsi := func(path string, number, location int32) wire.DiskView {
		return wire.DiskView{Path: path, Controller: "SCSI", ControllerNumber: number, Location: location}
	}
	for _, tc := range []struct {
		name  string
		disks []wire.DiskView
		want  []infrav1.DataDiskStatus
	}{
		{"both attached, listed out of order", []wire.DiskView{scsi(`C:\vms\u1\logs.vhdx`, 0, 2), scsi(`C:\disks\u1.vhdx`, 0, 0), scsi(`C:\vms\u1\Containerd.VHDX`, 0, 1)},
			[]infrav1.DataDiskStatus{{Name: "containerd", Target: 0, LUN: 1}, {Name: "logs", Target: 0, LUN: 2}}},
		{"one not attached yet", []wire.DiskView{scsi(`C:\disks\u1.vhdx`, 0, 0), scsi(`C:\vms\u1\logs.vhdx`, 0, 2)},
			[]infrav1.DataDiskStatus{{Name: "logs", Target: 0, LUN: 2}}},
		{"another controller has no guest address by the rule", []wire.DiskView{scsi(`C:\vms\u1\containerd.vhdx`, 1, 1)}, nil},
		{"IDE", []wire.DiskView{{Path: `C:\vms\u1\containerd.vhdx`, Controller: "IDE", Location: 1}}, nil},
		{"no disks", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(observeDataDisks(spec, &wire.View{Disks: tc.disks})).To(Equal(tc.want))
		})
	}
}
