package hypervsim

import (
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// diffDiskBytes is what a new differencing disk takes on the host.
const diffDiskBytes = 4 << 20

func (h *Host) info() wire.HostInfo {
	free := h.memoryMiB
	var switches []string
	for s := range h.switches {
		switches = append(switches, s)
	}
	sort.Strings(switches)
	for _, vm := range h.vms {
		if vm.State != "Off" {
			free -= vm.MemoryBytes >> 20
		}
	}
	return wire.HostInfo{Name: h.Name, FreeMemoryMiB: free, LogicalProcessors: 32, VMs: len(h.vms), Switches: switches, Build: 26100,
		GPUPartitions: h.gpuPartitions, GPUPartitionsInUse: h.partitionsInUse(), AssignableDevices: h.assignable(nil)}
}

func diskPath(k wire.VMKey) string { return k.DiskPath + `\` + k.UID + ".vhdx" }
func vmDir(k wire.VMKey) string    { return k.VMPath + `\` + k.UID }
func isoPath(k wire.VMKey) string  { return vmDir(k) + `\cidata.iso` }

// find mirrors Find-CapwinVM: by id, by the notes tag, by the differencing disk.
func (h *Host) find(k wire.VMKey) *VM {
	if vm, ok := h.vms[k.ID]; ok && k.ID != "" {
		return vm
	}
	for _, vm := range h.vms {
		if strings.Contains(vm.Notes, "capwin-uid:"+k.UID) {
			return vm
		}
	}
	for _, vm := range h.vms {
		if strings.EqualFold(vm.Disk, diskPath(k)) {
			return vm
		}
	}
	return nil
}

// create mirrors create.ps1: a VM an earlier run finished is returned as it is, one an interrupted
// run left is finished; the complete line goes into the notes last.
func (h *Host) create(in wire.CreateInput) (any, error) {
	complete := "capwin-complete:" + in.UID
	vm := h.find(in.VMKey)
	if vm != nil && strings.Contains(vm.Notes, complete) {
		return view(vm), nil
	}
	if vm != nil && vm.State != "Off" {
		return nil, fail(wire.KindFailed, "VM %s of an interrupted create is not off (%s); turn it off to let capwin finish it", vm.ID, vm.State)
	}
	parent, ok := h.vol(in.ParentDisk).files[strings.ToLower(in.ParentDisk)]
	if !ok {
		return nil, fail(wire.KindInvalidSpec, "parent disk %s does not exist on host %s", in.ParentDisk, h.Name)
	}
	for _, n := range in.NICs {
		if !h.switches[n.Switch] {
			return nil, fail(wire.KindInvalidSpec, "virtual switch %s does not exist on host %s", n.Switch, h.Name)
		}
	}
	if in.GPU != nil {
		if err := h.testGPU(vm, in.GPU); err != nil {
			return nil, err
		}
	}
	if in.DiskBytes > 0 && in.DiskBytes < parent {
		return nil, fail(wire.KindInvalidSpec, "diskGiB is smaller than the parent disk (%d bytes)", parent)
	}
	iso, err := base64.StdEncoding.DecodeString(in.ConfigDrive)
	if err != nil {
		return nil, fail(wire.KindFailed, "config drive: %v", err)
	}
	disk := diskPath(in.VMKey)
	if _, ok := h.vol(disk).files[strings.ToLower(disk)]; !ok {
		if err := h.write(disk, diffDiskBytes); err != nil {
			return nil, err
		}
	}
	if err := h.newDataDisks(in); err != nil {
		return nil, err
	}
	if len(iso) > 0 {
		h.unlink(isoPath(in.VMKey)) // WriteAllBytes replaces what an earlier run wrote
		if err := h.write(isoPath(in.VMKey), int64(len(iso))); err != nil {
			return nil, err
		}
		h.vol(isoPath(in.VMKey)).drives[strings.ToLower(isoPath(in.VMKey))] = iso
	}
	if vm == nil {
		vm = &VM{ID: h.newID(), Name: in.Name, State: "Off", MemoryBytes: in.MemoryBytes, Disk: disk, Parent: in.ParentDisk,
			KVP: map[string]string{}, GuestFiles: map[string][]byte{}, Settings: newVMSettings()}
		h.vms[vm.ID] = vm
	}
	if h.cut > 0 {
		h.cut--
		return nil, errCut
	}
	vm.Notes = fmt.Sprintf("capwin-uid:%s\ncapwin-owner:%s", in.UID, in.Owner)
	vm.Processors, vm.MemoryBytes, vm.DynamicMemory = in.Processors, in.MemoryBytes, in.DynamicMemory != nil
	vm.SecureBoot, vm.SecureBootTemplate, vm.NestedVirtualization = in.SecureBoot.Enabled, in.SecureBoot.Template, in.NestedVirtualization
	if err := setVMSettings(vm, in.Settings); err != nil {
		return nil, err
	}
	vm.NICs, vm.DVDs = nil, nil
	for _, n := range in.NICs {
		vm.NICs = append(vm.NICs, NIC{MAC: n.MAC, Switch: n.Switch, VLANID: n.VLANID})
	}
	enableTPM(vm, in)
	if in.GPU != nil {
		h.addGPU(vm, in.GPU)
	}
	if err := attachDataDisks(vm, in); err != nil {
		return nil, err
	}
	if len(iso) > 0 {
		vm.DVDs, vm.DVDLocation = []string{isoPath(in.VMKey)}, in.ConfigDriveLocation
	}
	if in.GPU != nil && !gpuGiven(vm, in.GPU) {
		return nil, fail(wire.KindFailed, "VM %s has no GPU (%s) after create", vm.ID, in.GPU.Mode)
	}
	if in.Cluster != "" {
		if err := h.registerRole(vm, in); err != nil {
			return nil, err
		}
	}
	vm.Notes += "\n" + complete
	return view(vm), nil
}

// errCut ends an operation whose connection broke (CutCreates).
var errCut = errors.New("the connection broke during the operation")

// unlink deletes a file if it exists.
func (h *Host) unlink(path string) {
	p, v := strings.ToLower(path), h.vol(path)
	if size, ok := v.files[p]; ok {
		v.delete(p)
		h.freeDiskBytes += size
	}
}

// write creates a file, failing like Windows when the disk is full.
func (h *Host) write(path string, size int64) error {
	if size > h.freeDiskBytes {
		return fail(wire.KindDiskFull, "There is not enough space on the disk. (%s)", path)
	}
	h.freeDiskBytes -= size
	h.vol(path).files[strings.ToLower(path)] = size
	return nil
}

func (h *Host) power(in wire.PowerInput) (any, error) {
	vm, ok := h.vms[in.ID]
	if !ok {
		return nil, fail(wire.KindNotFound, "VM %s does not exist", in.ID)
	}
	target := map[string]string{wire.PowerStart: "Running", wire.PowerOff: "Off", wire.PowerShutdown: "Off"}[in.Action]
	switch {
	case target == "":
		return nil, fail(wire.KindFailed, "unknown power action %s", in.Action)
	case in.Action == wire.PowerShutdown && !vm.Heartbeat:
		return nil, fail(wire.KindGuestUnavailable, "the guest shutdown service is not running")
	case vm.State == target:
		return wire.JobRef{}, nil
	}
	for _, j := range h.jobs {
		if j.vm == vm.ID {
			j.ended = true // the new state change takes over
		}
	}
	id := h.newID()
	h.jobs[id] = &job{vm: vm.ID, state: target, due: time.Now().Add(h.jobDelay)}
	vm.State = map[string]string{"Running": "Starting", "Off": "Stopping"}[target]
	if in.Action == wire.PowerStart {
		vm.StartNotes = append(vm.StartNotes, vm.Notes)
	}
	if in.Action == wire.PowerShutdown {
		return wire.JobRef{}, nil // the guest shuts down on its own; capwin watches the state
	}
	return wire.JobRef{Job: id}, nil
}

func (h *Host) jobState(in wire.JobRef) wire.JobState {
	j, ok := h.jobs[in.Job]
	if !ok {
		return wire.JobState{State: "unknown"}
	}
	if time.Now().Before(j.due) {
		return wire.JobState{State: "running", Message: "50%"}
	}
	return wire.JobState{State: "succeeded"}
}

// remove mirrors remove.ps1: the cluster role goes first, then the VM and its files.
func (h *Host) remove(k wire.VMKey) error {
	vm := h.find(k)
	if k.Cluster != "" {
		if err := h.removeRole(k); err != nil {
			return err
		}
	}
	if h.cutRemove > 0 {
		h.cutRemove--
		return errCut
	}
	if vm != nil {
		h.releaseGPU(vm)
		delete(h.vms, vm.ID)
	}
	prefix := strings.ToLower(vmDir(k)) + `\`
	for _, v := range h.volumes() {
		for p, size := range v.files {
			if p == strings.ToLower(diskPath(k)) || strings.HasPrefix(p, prefix) {
				v.delete(p)
				h.freeDiskBytes += size
			}
		}
	}
	return nil
}

func (h *Host) eject(k wire.VMKey) {
	iso := strings.ToLower(isoPath(k))
	if vm := h.find(k); vm != nil {
		var keep []string
		for _, d := range vm.DVDs {
			if strings.ToLower(d) != iso {
				keep = append(keep, d)
			}
		}
		vm.DVDs = keep
	}
	h.unlink(iso)
}

// powerShellDirect is what Hyper-V checks before PowerShell Direct runs anything in a VM: the VM
// exists and runs with its integration services, and the guest accepts the credentials (h.mu
// held).
func (h *Host) powerShellDirect(id, username, password string) (*VM, error) {
	vm, ok := h.vms[id]
	switch {
	case !ok:
		return nil, fail(wire.KindNotFound, "VM %s does not exist", id)
	case vm.State != "Running" || !vm.Heartbeat:
		return nil, fail(wire.KindGuestFailed, "PowerShell Direct as %s: the virtual machine is not running", username)
	case username == "" || (h.guestPassword != "" && password != h.guestPassword):
		return nil, fail(wire.KindGuestFailed, "PowerShell Direct as %s: The credential is invalid.", username)
	}
	return vm, nil
}

func (h *Host) guestRun(in wire.GuestInput) (any, error) {
	vm, err := h.powerShellDirect(in.ID, in.Username, in.Password)
	if err != nil {
		return nil, err
	}
	if len(vm.GuestPIDs) > 0 {
		return wire.GuestStarted{PID: vm.GuestPIDs[0]}, nil
	}
	files := map[string][]byte{}
	for _, f := range in.Files {
		data, err := base64.StdEncoding.DecodeString(f.Data)
		if err != nil {
			return nil, fail(wire.KindGuestFailed, "file %s: %v", f.Path, err)
		}
		vm.GuestFiles[f.Path], files[f.Path] = data, data
	}
	runLauncher(vm, files[guest.GuestLaunchPath])
	pid := int64(4000 + len(h.vms)*10 + h.nextID)
	vm.GuestPIDs = append(vm.GuestPIDs, pid)
	vm.Notes = fmt.Sprintf("%s\ncapwin-guest-run:pid=%d", vm.Notes, pid)
	if cb := h.OnGuestRun; cb != nil {
		go cb(h, vm.ID, files)
	}
	return wire.GuestStarted{PID: pid}, nil
}

// view mirrors Get-CapwinView.
func view(vm *VM) *wire.View {
	v := &wire.View{ID: vm.ID, Name: vm.Name, State: vm.State, Notes: vm.Notes, Heartbeat: vm.Heartbeat,
		DVDs: append([]string{}, vm.DVDs...), Disks: diskViews(vm), KVP: map[string]string{},
		SecureBoot: vm.SecureBoot, TPM: vm.TPM}
	for _, n := range vm.NICs {
		v.NICs = append(v.NICs, wire.NICView{MAC: n.MAC, Switch: n.Switch, IPs: append([]string{}, n.IPs...)})
	}
	for k, val := range vm.KVP {
		if strings.HasPrefix(k, "capwin.") {
			v.KVP[k] = val
		}
	}
	return v
}

// peek mirrors peek.ps1: the guest state of the VMs of in that exist.
func (h *Host) peek(in wire.PeekInput) wire.Peeked {
	out := wire.Peeked{VMs: []wire.Peek{}}
	for _, id := range in.IDs {
		if vm, ok := h.vms[id]; ok {
			out.VMs = append(out.VMs, wire.PeekOf(view(vm)))
		}
	}
	return out
}

// enableTPM is create.ps1's Enable-CapwinTpm: a VM whose TPM is on is left as it is; otherwise it
// gets a local key protector unless it has one, then its TPM.
func enableTPM(vm *VM, in wire.CreateInput) {
	if !in.VTPM || vm.TPM {
		return
	}
	if vm.KeyProtectors == 0 {
		vm.KeyProtectors++
	}
	vm.TPM = true
}
