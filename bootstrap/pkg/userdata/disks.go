package userdata

import (
	"fmt"
	"strings"
)

// docDisks maps the data disks to the disks step, with the defaults (GPT, NTFS) filled in. The
// webhook checks the rest; what would make Windows' storage cmdlets fail is refused here too.
func docDisks(disks []Disk) ([]DocDisk, error) {
	out := make([]DocDisk, 0, len(disks))
	for _, d := range disks {
		where := fmt.Sprintf("disk at SCSI target %d LUN %d", d.Target, d.LUN)
		doc := DocDisk{
			Target:             d.Target,
			LUN:                d.LUN,
			PartitionStyle:     strings.ToUpper(orDefault(d.PartitionStyle, "GPT")),
			FileSystem:         orDefault(d.FileSystem, "NTFS"),
			Label:              d.Label,
			AllocationUnitSize: d.AllocationUnitSize,
			DriveLetter:        strings.ToUpper(d.DriveLetter),
		}
		if d.MountPath != "" {
			doc.MountPath = strings.TrimRight(d.MountPath, `\`) + `\`
		}
		switch {
		case doc.PartitionStyle != "GPT" && doc.PartitionStyle != "MBR":
			return nil, fmt.Errorf("%s: partition style %q: want GPT or MBR", where, d.PartitionStyle)
		case !strings.EqualFold(doc.FileSystem, "NTFS") && !strings.EqualFold(doc.FileSystem, "ReFS"):
			return nil, fmt.Errorf("%s: file system %q: want NTFS or ReFS", where, d.FileSystem)
		case (doc.DriveLetter == "") == (doc.MountPath == ""):
			return nil, fmt.Errorf("%s: set exactly one of a drive letter and a mount path", where)
		}
		out = append(out, doc)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
