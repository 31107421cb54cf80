package guest

import (
	"fmt"
	"strings"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// Disk is a data disk attached to the guest at a SCSI address (Win32_DiskDrive's SCSITargetId
// and SCSILogicalUnit). PartitionStyle "" is a RAW disk; otherwise the disk holds one volume with
// FileSystem and Label (FileSystem "" with a partition style: initialized, no partition).
type Disk struct {
	Target, LUN       int32
	PartitionStyle    string
	FileSystem, Label string
	// DriveLetter and MountPath are where the volume is mounted ("": nowhere).
	DriveLetter, MountPath string
}

// Disks returns the guest's data disks as the disks step left them.
func (g *Guest) Disks() []Disk {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Disk(nil), g.disks...)
}

// prepareDisks is the disks step: only a RAW disk is initialized, only an empty one partitioned
// and formatted; a volume that does not match fails the step and is left as it is.
func (s *script) prepareDisks() error {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	for _, want := range s.doc.Disks {
		name := fmt.Sprintf("the disk at SCSI target %d LUN %d", want.Target, want.LUN)
		i := s.g.diskAt(want.Target, want.LUN)
		if i < 0 {
			return fmt.Errorf("%s is not attached: no disk has that SCSI address", name)
		}
		d := &s.g.disks[i]
		if d.PartitionStyle == "" {
			d.PartitionStyle = want.PartitionStyle
		}
		if d.PartitionStyle != want.PartitionStyle {
			return fmt.Errorf("%s has a %s partition table, want %s; capwin never erases a disk: clear it or change spec.disks", name, d.PartitionStyle, want.PartitionStyle)
		}
		if d.FileSystem == "" {
			d.FileSystem, d.Label = want.FileSystem, want.Label
		} else if !strings.EqualFold(d.FileSystem, want.FileSystem) || !strings.EqualFold(d.Label, want.Label) {
			return fmt.Errorf("%s holds 1 partition(s) (%s '%s'), want one %s volume labelled '%s'; capwin never erases a disk: clear it or change spec.disks",
				name, d.FileSystem, d.Label, want.FileSystem, want.Label)
		}
		if err := s.g.mount(i, want); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (g *Guest) diskAt(target, lun int32) int {
	for i, d := range g.disks {
		if d.Target == target && d.LUN == lun {
			return i
		}
	}
	return -1
}

// mount gives disk i's volume its drive letter or mount folder (held under g.mu).
func (g *Guest) mount(i int, want userdata.DocDisk) error {
	d := &g.disks[i]
	if want.DriveLetter != "" {
		for j, other := range g.disks {
			if j != i && strings.EqualFold(other.DriveLetter, want.DriveLetter) {
				return fmt.Errorf("drive %s: is taken by another volume", want.DriveLetter)
			}
		}
		d.DriveLetter = want.DriveLetter
		return nil
	}
	if strings.EqualFold(d.MountPath, want.MountPath) {
		return nil
	}
	if len(g.fs.under(fold(want.MountPath))) > 0 {
		return fmt.Errorf("mount folder %s is not empty", want.MountPath)
	}
	d.MountPath = want.MountPath
	return nil
}

// onVolume says whether a path is on a mounted volume: the system drive or a data disk's.
func (g *Guest) onVolume(path string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := fold(path) + `\`
	if strings.HasPrefix(p, `c:\`) {
		return true
	}
	for _, d := range g.disks {
		if d.DriveLetter != "" && strings.HasPrefix(p, fold(d.DriveLetter)+`:\`) {
			return true
		}
	}
	return false
}
