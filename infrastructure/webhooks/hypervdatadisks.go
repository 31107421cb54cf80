package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// Limits of Hyper-V data disks: SCSI controller 0 has 64 locations; the OS disk takes 0, the data
// disks 1-32 and the config drive the one after them. A VHDX holds at most 64 TiB.
const (
	maxHyperVDataDisks   = 32
	maxDataDiskNameChars = 32
	maxHyperVDataDiskGiB = 65536
)

// validateHyperVDataDisks checks what the CRD schema also declares (an object stored before the
// field's rules, or a template's spec checked in Go, gets the same answer) and what it cannot:
// names unique, as file names in one folder must be.
func validateHyperVDataDisks(disks []infrav1.HyperVDataDisk, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(disks) > maxHyperVDataDisks {
		errs = append(errs, field.TooMany(path, len(disks), maxHyperVDataDisks))
	}
	seen := map[infrav1.DataDiskName]bool{}
	for i, d := range disks {
		p := path.Index(i)
		if seen[d.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		seen[d.Name] = true
		if problems := validation.IsDNS1123Label(string(d.Name)); len(problems) > 0 || len(d.Name) > maxDataDiskNameChars {
			errs = append(errs, field.Invalid(p.Child("name"), d.Name,
				"must be at most 32 lower-case letters, digits and '-', starting and ending with a letter or digit (it names the file <name>.vhdx)"))
		}
		if d.SizeGiB < 1 || d.SizeGiB > maxHyperVDataDiskGiB {
			errs = append(errs, field.Invalid(p.Child("sizeGiB"), d.SizeGiB, "must be between 1 and 65536 (64 TiB, the VHDX limit)"))
		}
		if d.Type != "" && d.Type != infrav1.DiskDynamic && d.Type != infrav1.DiskFixed {
			errs = append(errs, field.NotSupported(p.Child("type"), d.Type, []infrav1.HyperVDiskType{infrav1.DiskDynamic, infrav1.DiskFixed}))
		}
	}
	return errs
}
