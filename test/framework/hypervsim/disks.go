package hypervsim

import (
	"strings"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// VHD is a virtual hard disk file of the host (data disks): its type and virtual size.
type VHD struct {
	Type      string
	SizeBytes int64
}

// Drive is a hard disk drive attached to SCSI controller 0 of a VM.
type Drive struct {
	Path     string
	Location int32
}

// dynamicBytes is what a new dynamic VHDX takes on the host before the guest writes to it.
const dynamicBytes = 4 << 20

// VHD returns a virtual hard disk file of the host by path.
func (h *Host) VHD(path string) (VHD, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.vol(path).vhds[strings.ToLower(path)]
	return d, ok
}

// AddVHD puts a virtual hard disk file on the host, as an administrator (or an earlier run) would.
func (h *Host) AddVHD(path string, d VHD) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.vol(path)
	v.files[strings.ToLower(path)] = dynamicBytes
	h.freeDiskBytes -= dynamicBytes
	v.vhds[strings.ToLower(path)] = d
}

func dataDiskPath(k wire.VMKey, d wire.DataDiskInput) string {
	return vmDir(k) + `\` + d.Name + ".vhdx"
}

// newDataDisks mirrors New-CapwinDataDisk: a file of the right size and type is kept, any other
// is an error; a missing one is created (a fixed disk takes its whole size on the host).
func (h *Host) newDataDisks(in wire.CreateInput) error {
	for _, d := range in.DataDisks {
		path, want := dataDiskPath(in.VMKey, d), VHD{Type: d.Type, SizeBytes: d.SizeBytes}
		if have, ok := h.vol(path).vhds[strings.ToLower(path)]; ok {
			if have != want {
				return fail(wire.KindFailed, "data disk %s exists as a %s disk of %d bytes, want %s of %d bytes; capwin never replaces a disk: move it away to let capwin create it",
					path, have.Type, have.SizeBytes, want.Type, want.SizeBytes)
			}
			continue
		}
		size := int64(dynamicBytes)
		if d.Type == "Fixed" {
			size = d.SizeBytes
		}
		if err := h.write(path, size); err != nil {
			return err
		}
		h.vol(path).vhds[strings.ToLower(path)] = want
	}
	return nil
}

// attachDataDisks mirrors create.ps1's Add-VMHardDiskDrive: a disk already at its location stays,
// a location taken by another file fails as Hyper-V does.
func attachDataDisks(vm *VM, in wire.CreateInput) error {
	for _, d := range in.DataDisks {
		path := dataDiskPath(in.VMKey, d)
		if at := vm.driveAt(d.Location); at != nil {
			if !strings.EqualFold(at.Path, path) {
				return fail(wire.KindFailed, "location %d of SCSI controller 0 of VM %s holds %s", d.Location, vm.ID, at.Path)
			}
			continue
		}
		vm.DataDisks = append(vm.DataDisks, Drive{Path: path, Location: d.Location})
	}
	return nil
}

func (vm *VM) driveAt(location int32) *Drive {
	for i := range vm.DataDisks {
		if vm.DataDisks[i].Location == location {
			return &vm.DataDisks[i]
		}
	}
	return nil
}

// diskViews mirrors Get-CapwinView's disks: the differencing disk at SCSI 0:0, then data disks.
func diskViews(vm *VM) []wire.DiskView {
	out := []wire.DiskView{{Path: vm.Disk, Controller: "SCSI"}}
	for _, d := range vm.DataDisks {
		out = append(out, wire.DiskView{Path: d.Path, Controller: "SCSI", Location: d.Location})
	}
	return out
}
