package webhooks

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// disk is a data disk at SCSI target/LUN mounted at a drive letter ("D".."Z") or a folder.
func disk(target, lun int32, mount string) bootstrapv1.Disk {
	d := bootstrapv1.Disk{Location: bootstrapv1.DiskLocation{Target: target, LUN: lun}, Label: "data"}
	if len(mount) == 1 {
		d.DriveLetter = mount
	} else {
		d.MountPath = mount
	}
	return d
}

func TestValidateDisks(t *testing.T) {
	refs := disk(1, 0, "E")
	refs.FileSystem, refs.AllocationUnitSize = bootstrapv1.FileSystemReFS, 8192
	neither := disk(1, 0, "E")
	neither.DriveLetter = ""
	cases := []struct {
		name       string
		disks      []bootstrapv1.Disk
		root, stat string
		want       []want
	}{
		{"letter and folder", []bootstrapv1.Disk{disk(1, 0, "E"), disk(0, 1, `C:\data`)}, `E:\containerd\root`, `C:\data\state`, nil},
		{"root on the system drive", []bootstrapv1.Disk{disk(1, 0, "e")}, `C:\ProgramData\containerd\root`, "", nil},
		{"same SCSI address", []bootstrapv1.Disk{disk(1, 0, "E"), disk(1, 0, "F")}, "", "", []want{{"spec.disks[1].location", "same as spec.disks[0].location"}}},
		{"same drive letter", []bootstrapv1.Disk{disk(1, 0, "E"), disk(2, 0, "e")}, "", "", []want{{"spec.disks[1].driveLetter", "same as spec.disks[0].driveLetter"}}},
		{"same folder", []bootstrapv1.Disk{disk(1, 0, `C:\data`), disk(2, 0, `c:\DATA\`)}, "", "", []want{{"spec.disks[1].mountPath", "same as spec.disks[0].mountPath"}}},
		{"system drive", []bootstrapv1.Disk{disk(1, 0, "c")}, "", "", []want{{"spec.disks[0].driveLetter", "system drive"}}},
		{"no mount", []bootstrapv1.Disk{neither}, "", "", []want{{"spec.disks[0]", "exactly one"}}},
		{"dot folder", []bootstrapv1.Disk{disk(1, 0, `C:\data\..\x`)}, "", "", []want{{"spec.disks[0].mountPath", "plain absolute folder"}}},
		{"ReFS cluster size", []bootstrapv1.Disk{refs}, "", "", []want{{"spec.disks[0].allocationUnitSize", "supported values"}}},
		{"root on no listed disk", []bootstrapv1.Disk{disk(1, 0, "E")}, `F:\containerd`, `C:\datastate`, []want{{"spec.containerd.root", "data disk of spec.disks"}}},
		{"state without disks", nil, "", `D:\state`, []want{{"spec.containerd.state", "data disk of spec.disks"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &bootstrapv1.WindowsConfigSpec{}
			DefaultSpec(s)
			s.Disks, s.Containerd.Root, s.Containerd.State = tc.disks, tc.root, tc.stat
			errs := ValidateSpec(s, field.NewPath("spec"))
			g.Expect(errs).To(HaveLen(len(tc.want)), "%v", errs)
			for i, w := range tc.want {
				g.Expect(errs[i].Field).To(Equal(w.field))
				g.Expect(errs[i].Error()).To(ContainSubstring(w.detail))
			}
		})
	}
}
