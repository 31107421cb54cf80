package webhooks

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// validateDisks checks what the schema cannot: each SCSI address, drive letter and mount folder
// is used once, C: is the system drive, a mount folder is a plain path, ReFS's cluster sizes, and containerd's directories on a data disk name one of spec.disks.
func validateDisks(spec *bootstrapv1.WindowsConfigSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]*field.Path{}
	once := func(key string, at *field.Path, value any) {
		if prev, ok := seen[key]; ok {
			errs = append(errs, duplicate(at, value, fmt.Sprintf("same as %s", prev)))
			return
		}
		seen[key] = at
	}
	for i, d := range spec.Disks {
		at := path.Child("disks").Index(i)
		once(fmt.Sprintf("scsi %d/%d", d.Location.Target, d.Location.LUN), at.Child("location"), d.Location)
		switch {
		case (d.DriveLetter == "") == (d.MountPath == ""):
			errs = append(errs, field.Invalid(at, d.DriveLetter+d.MountPath, "set exactly one of driveLetter and mountPath"))
		case strings.EqualFold(d.DriveLetter, "C"):
			errs = append(errs, field.Invalid(at.Child("driveLetter"), d.DriveLetter, "C: is the system drive"))
		case d.DriveLetter != "":
			once("letter "+strings.ToUpper(d.DriveLetter), at.Child("driveLetter"), d.DriveLetter)
		default:
			errs = append(errs, mountPathProblems(d.MountPath, at.Child("mountPath"))...)
			once("path "+folder(d.MountPath), at.Child("mountPath"), d.MountPath)
		}
		if d.FileSystem == bootstrapv1.FileSystemReFS && d.AllocationUnitSize != 0 && d.AllocationUnitSize != 4096 && d.AllocationUnitSize != 65536 {
			errs = append(errs, field.NotSupported(at.Child("allocationUnitSize"), d.AllocationUnitSize, []string{"4096", "65536"}))
		}
	}
	for _, p := range []struct {
		name, dir string
	}{{"root", spec.Containerd.Root}, {"state", spec.Containerd.State}} {
		if p.dir != "" && !onSystemOrDataDisk(p.dir, spec.Disks) {
			errs = append(errs, field.Invalid(path.Child("containerd", p.name), p.dir,
				"must be on C: or on a data disk of spec.disks (under its drive letter or mount path)"))
		}
	}
	return errs
}

// folder is a Windows path as Windows compares it: case-insensitive, with one trailing backslash.
func folder(path string) string {
	return strings.ToLower(strings.TrimRight(path, `\`)) + `\`
}

func mountPathProblems(path string, at *field.Path) field.ErrorList {
	f := folder(path)
	if strings.Contains(f, `\\`) || strings.Contains(f, `\.\`) || strings.Contains(f, `\..\`) {
		return field.ErrorList{field.Invalid(at, path, `must be a plain absolute folder such as C:\data`)}
	}
	return nil
}

// onSystemOrDataDisk says whether a directory is on C: or on a data disk's drive letter or mount
// folder.
func onSystemOrDataDisk(dir string, disks []bootstrapv1.Disk) bool {
	f := folder(dir)
	for _, d := range disks {
		if d.DriveLetter != "" && strings.HasPrefix(f, strings.ToLower(d.DriveLetter)+`:\`) ||
			d.MountPath != "" && strings.HasPrefix(f, folder(d.MountPath)) {
			return true
		}
	}
	return strings.HasPrefix(f, `c:\`)
}
