// Package hypervsim simulates Windows Server Hyper-V hosts at the WinRM boundary: a WS-Man server
// (package wsman) that the real WinRM client talks to, in front of an in-memory model of one host
// (VMs, disks, switches, KVP, power, jobs, guests). It runs only capwin's own static scripts: a
// command is accepted when it is the runner, its library and operation are known by content hash,
// and both parse as PowerShell; the operation is then applied to the model in Go.
package hypervsim

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"
)

// Host is one simulated Hyper-V host.
type Host struct {
	Name string

	// mu guards the host; the nodes of a failover cluster share one (they share its volumes).
	mu            *sync.Mutex
	memoryMiB     int64
	freeDiskBytes int64
	switches      map[string]bool
	// local is the host's own disks; csv, on a node of a failover cluster, the cluster's shared
	// volumes (C:\ClusterStorage\...), which every node sees at the same path.
	local *volume
	csv   *volume
	// cluster is the failover cluster the host is a node of (nil: none).
	cluster *Cluster
	// down: the node failed (Cluster.Fail); it runs no operation until it is back.
	down bool
	vms  map[string]*VM // by id
	// gpuPartitions is the PartitionCount of the host's partitionable GPUs; devices maps the
	// location path of each device dismounted for assignment to the VM holding it ("" = free).
	gpuPartitions int
	devices       map[string]string
	jobs          map[string]*job
	ops           map[string]int
	nextID        int
	// jobDelay is how long a power job runs.
	jobDelay time.Duration
	// guestPassword is the only password PowerShell Direct accepts ("" = any).
	guestPassword string
	// lose counts, per operation, answers to drop after the operation was applied.
	lose map[string]int
	// cut counts creates to stop right after New-VM (CutCreates); cutRemove removes to stop right
	// after the cluster role is unregistered (CutRemoves).
	cut, cutRemove int
	// skipSyntax accepts capwin's scripts by content hash alone (SkipSyntaxCheck).
	skipSyntax bool
	// hung, while not nil, holds every operation (or only hungOp's) until it is closed (Hang).
	hung   chan struct{}
	hungOp string
	// held counts, per operation, the runs being held by hung now.
	held map[string]int
	// parents are the copies of parent disk sources (parent.ps1); nil until first used.
	parents *parents
	// OnGuestRun is called (without the host lock) after guest.ps1 started a launcher in a VM.
	OnGuestRun func(h *Host, vmID string, files map[string][]byte)
	// OnGuestLogs runs a log collector (the rendered script guestlogs.ps1 copies in) in a VM's
	// guest and returns the zip it made; nil means the guest has no simulated Windows to run it.
	OnGuestLogs func(h *Host, vmID string, script []byte) ([]byte, error)
}

// VM is one simulated VM. Tests change guest-side fields through Host.Guest.
type VM struct {
	ID, Name, Notes, State string
	Processors             int32
	MemoryBytes            int64
	DynamicMemory          bool
	// NestedVirtualization is Set-VMProcessor -ExposeVirtualizationExtensions.
	NestedVirtualization bool
	SecureBoot           bool
	SecureBootTemplate   string
	// KeyProtectors counts Set-VMKeyProtector -NewLocalKeyProtector on the VM; TPM is Enable-VMTPM.
	KeyProtectors int
	TPM           bool
	// GPU is the partition or assigned devices the VM was given.
	GPU  GPU
	Disk string
	// DataDisks are attached to SCSI controller 0 after Disk (location 0).
	DataDisks []Drive
	// Parent is the golden disk the VM's differencing disk was created from.
	Parent string
	DVDs   []string
	// DVDLocation is the config drive's location on SCSI controller 0.
	DVDLocation int32
	NICs        []NIC
	// Guest side: integration services heartbeat, KVP guest items, files and processes.
	Heartbeat  bool
	KVP        map[string]string
	GuestFiles map[string][]byte
	GuestPIDs  []int64
	// GuestNetwork is what the launcher configured in the guest.
	GuestNetwork GuestNetwork
	// Set-VM settings (Get-VM's CheckpointType, AutomaticCheckpointsEnabled, AutomaticStartAction,
	// AutomaticStartDelay, AutomaticStopAction).
	Settings VMSettings
	// StartNotes are the VM's notes each time it was started (tests check what was started).
	StartNotes []string
}

// NIC is one VM network adapter.
type NIC struct {
	MAC, Switch string
	VLANID      int32
	IPs         []string
}

type job struct {
	vm    string
	state string // target VM state
	due   time.Time
	// ended: the job set its VM's state (or a later job on the VM took over); it is kept for
	// its result and never applies again.
	ended bool
}

// NewHost returns a host with memory, free disk space, switches and parent disks.
func NewHost(name string, memoryMiB int64, switches []string, parentDisks map[string]int64) *Host {
	h := &Host{Name: name, mu: &sync.Mutex{}, memoryMiB: memoryMiB, freeDiskBytes: 1 << 40, switches: map[string]bool{}, local: newVolume(),
		vms: map[string]*VM{}, devices: map[string]string{}, jobs: map[string]*job{}, ops: map[string]int{}, lose: map[string]int{}, jobDelay: 200 * time.Millisecond}
	for _, s := range switches {
		h.switches[s] = true
	}
	for p, size := range parentDisks {
		h.local.files[strings.ToLower(p)] = size
	}
	return h
}

// AddSwitch creates a virtual switch on the host (New-VMSwitch by hand: capwin never creates one).
func (h *Host) AddSwitch(name string) { h.mu.Lock(); h.switches[name] = true; h.mu.Unlock() }

// SetFreeDisk sets the free disk space (0 makes every disk or file creation fail as disk full).
func (h *Host) SetFreeDisk(bytes int64) { h.mu.Lock(); h.freeDiskBytes = bytes; h.mu.Unlock() }

// Hang makes every operation run until its command is cancelled or Hang(false): a host whose
// PowerShell or WMI hangs, while WinRM still answers (the client keeps waiting for output).
func (h *Host) Hang(hang bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hungOp = ""
	switch {
	case hang && h.hung == nil:
		h.hung = make(chan struct{})
	case !hang && h.hung != nil:
		close(h.hung)
		h.hung = nil
	}
}

// HangOp makes only the runs of one operation (such as "create") hang, until Hang(false).
func (h *Host) HangOp(op string) {
	h.Hang(true)
	h.mu.Lock()
	h.hungOp = op
	h.mu.Unlock()
}

// Held returns how many runs of an operation are being held by a hang now.
func (h *Host) Held(op string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[op]
}

// hold waits while the host hangs for op; false when the run was cancelled meanwhile.
func (h *Host) hold(ctx context.Context, op string) bool {
	h.mu.Lock()
	hung := h.hung
	if hung == nil || (h.hungOp != "" && h.hungOp != op) {
		h.mu.Unlock()
		return true
	}
	if h.held == nil {
		h.held = map[string]int{}
	}
	h.held[op]++
	h.mu.Unlock()
	defer func() { h.mu.Lock(); h.held[op]--; h.mu.Unlock() }()
	select {
	case <-hung:
		return true
	case <-ctx.Done():
		return false
	}
}

// SetJobDelay sets how long power jobs run.
func (h *Host) SetJobDelay(d time.Duration) { h.mu.Lock(); h.jobDelay = d; h.mu.Unlock() }

// LoseAnswers makes the next n runs of an operation take effect on the host but end without a
// result, as when the connection breaks after the host did the work.
func (h *Host) LoseAnswers(op string, n int) { h.mu.Lock(); h.lose[op] = n; h.mu.Unlock() }

// CutCreates makes the next n creates stop right after New-VM, as when the WinRM connection
// breaks mid-script: the VM exists on its disk, without notes, network adapters, config drive or
// firmware settings, and no result comes back.
func (h *Host) CutCreates(n int) { h.mu.Lock(); h.cut = n; h.mu.Unlock() }

// CutRemoves makes the next n removes stop right after the VM's cluster role was unregistered
// (before Remove-VM), as when the WinRM connection breaks mid-script; no result comes back.
func (h *Host) CutRemoves(n int) { h.mu.Lock(); h.cutRemove = n; h.mu.Unlock() }

// AddVM puts a VM on the host that capwin did not create (as an administrator would) and
// returns its id.
func (h *Host) AddVM(vm VM) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	vm.ID = h.newID()
	if vm.State == "" {
		vm.State = "Off"
	}
	if vm.KVP == nil {
		vm.KVP = map[string]string{}
	}
	if vm.GuestFiles == nil {
		vm.GuestFiles = map[string][]byte{}
	}
	h.vms[vm.ID] = &vm
	return vm.ID
}

// SkipSyntaxCheck makes the host accept capwin's scripts by their content hash alone, without
// parsing them: for a simulator that runs where no PowerShell parser is installed (the kind
// e2e's simulator image). The scripts are still only capwin's own, which the unit tests parse.
func (h *Host) SkipSyntaxCheck() { h.mu.Lock(); h.skipSyntax = true; h.mu.Unlock() }

// SetGuestPassword sets the password PowerShell Direct accepts.
func (h *Host) SetGuestPassword(p string) { h.mu.Lock(); h.guestPassword = p; h.mu.Unlock() }

// VMs returns copies of the host's VMs, by name.
func (h *Host) VMs() []VM {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle()
	var out []VM
	for _, vm := range h.vms {
		out = append(out, *vm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Files lists the paths of the host's files (disks, data disks, config drives), with those of
// its failover cluster's shared volumes.
func (h *Host) Files() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, v := range h.volumes() {
		for p := range v.files {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// File returns the contents of a config drive on the host (nil when there is none).
func (h *Host) File(path string) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.vol(path).drives[strings.ToLower(path)]...)
}

// Ops counts the operations run, by script name.
func (h *Host) Ops() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.ops {
		out[k] = v
	}
	return out
}

// Guest changes a VM's guest side (the simulated guest booting, reporting IPs and KVP items).
func (h *Host) Guest(id string, change func(vm *VM)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	vm, ok := h.vms[id]
	if !ok {
		return fmt.Errorf("host %s has no VM %s", h.Name, id)
	}
	change(vm)
	return nil
}

// GuestAddress is what a guest's integration services report once it has an address: the
// heartbeat and the address on its first network adapter.
func (h *Host) GuestAddress(id, ip string) error {
	return h.Guest(id, func(vm *VM) {
		vm.Heartbeat = true
		if len(vm.NICs) > 0 {
			vm.NICs[0].IPs = []string{ip}
		}
	})
}

// GuestKVP sets a KVP item the guest writes.
func (h *Host) GuestKVP(id, key, value string) error {
	return h.Guest(id, func(vm *VM) { vm.KVP[key] = value })
}

// settle finishes power jobs that are due.
func (h *Host) settle() {
	now := time.Now()
	for _, j := range h.jobs {
		if j.ended || now.Before(j.due) {
			continue
		}
		j.ended = true
		if vm, ok := h.vms[j.vm]; ok && vm.State != j.state {
			vm.State = j.state
			if j.state == "Off" {
				vm.Heartbeat = false
			}
		}
	}
}

func (h *Host) newID() string {
	h.nextID++
	// Hyper-V's VM ids are GUIDs, unique across hosts: a VM that moves to another node of a
	// failover cluster keeps its id beside the ids that node made.
	name := fnv.New32a()
	_, _ = name.Write([]byte(h.Name))
	return fmt.Sprintf("%08x-5a1b-4c2d-8e3f-%04x%08x", h.nextID, name.Sum32()&0xffff, h.nextID)
}
