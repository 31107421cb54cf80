package hyperv

import (
	"cmp"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// dataDiskInputs places a machine's data disks on SCSI controller 0: the OS disk is at location
// 0, the i-th data disk at i+1, the config drive after them (the rule infrav1.HyperVDataDisk
// documents, which WindowsConfig disks rely on).
func dataDiskInputs(disks []infrav1.HyperVDataDisk) ([]wire.DataDiskInput, int32) {
	out, location := make([]wire.DataDiskInput, 0, len(disks)), int32(1)
	for _, d := range disks {
		out = append(out, wire.DataDiskInput{Name: string(d.Name), SizeBytes: int64(d.SizeGiB) << 30,
			Type: string(cmp.Or(d.Type, infrav1.DiskDynamic)), Location: location})
		location++
	}
	return out, location
}

// observeDataDisks reports the spec's data disks found attached to SCSI controller 0, in spec
// order, matched by file name: Windows sees location n of a Hyper-V SCSI controller as target 0,
// LUN n. A disk not attached there is left out.
func observeDataDisks(spec []infrav1.HyperVDataDisk, v *wire.View) []infrav1.DataDiskStatus {
	var out []infrav1.DataDiskStatus
	for _, d := range spec {
		for _, dv := range v.Disks {
			if strings.EqualFold(dv.Controller, "SCSI") && dv.ControllerNumber == 0 && strings.EqualFold(fileName(dv.Path), string(d.Name)+".vhdx") {
				out = append(out, infrav1.DataDiskStatus{Name: d.Name, Target: 0, LUN: dv.Location})
				break
			}
		}
	}
	return out
}

// fileName is the last element of a Windows path.
func fileName(path string) string { return path[strings.LastIndexAny(path, `\/`)+1:] }
