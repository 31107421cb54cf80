// Package vcsim gives govmomi's vcsim the guest operations it otherwise runs in Docker containers:
// files copied into a VM and programs started there are kept in memory, for tests and for the
// simulated Windows guest to act on. Everything else stays vcsim's own.
package vcsim

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// transferPath is where copies into guests are PUT.
const transferPath = "/capwin-guest/"

// Process is a program started in a guest.
type Process struct {
	Pid                      int64
	Program, Arguments, User string
	Started                  time.Time
	// Ended is set (with ExitCode) once the program ended (Exit).
	Ended    *time.Time
	ExitCode int32
}

// Guest is what guest operations did in one VM.
type Guest struct {
	Files     map[string][]byte
	Processes []Process
}

// GuestOps holds the guests of one vcsim model.
type GuestOps struct {
	// Password, when set, is the only password a guest accepts.
	Password string
	// OnStart, when set, is called after a program was started in a VM (by VM reference value).
	OnStart func(vm string, p Process)

	mu      sync.Mutex
	guests  map[string]*Guest
	pending map[string]transfer
	nextPid int64
}

type transfer struct {
	vm, path string
	size     int64
	// out is a copy out of the guest (GET), else into it (PUT).
	out bool
}

// Install replaces vcsim's guest file and process managers; call it after model.Create and
// before model.Service.NewServer.
func Install(m *simulator.Model) *GuestOps {
	g := &GuestOps{guests: map[string]*Guest{}, pending: map[string]transfer{}, nextPid: 4000}
	gom := m.Map().Get(*m.ServiceContent.GuestOperationsManager).(*simulator.GuestOperationsManager)
	m.Map().Put(&fileManager{GuestFileManager: mo.GuestFileManager{Self: *gom.FileManager}, ops: g})
	m.Map().Put(&processManager{GuestProcessManager: mo.GuestProcessManager{Self: *gom.ProcessManager}, ops: g})
	m.Service.HandleFunc(transferPath, g.serveTransfer)
	return g
}

// TrustHosts sets the certificate thumbprint vCenter reports for every ESX host (vcsim serves
// the hosts' transfers itself, with its own certificate).
func TrustHosts(m *simulator.Model, thumbprint string) {
	for _, h := range m.Map().All("HostSystem") {
		host := h.(*simulator.HostSystem)
		host.Summary.Config.SslThumbprint = thumbprint
	}
}

// HostsAtClientAddress makes guest file transfers go to the address the client reached vCenter
// at: the ESX hosts report no management IP, so govmomi keeps that address in transfer URLs
// (vcsim serves the transfers itself). Without it, clients are sent to the hosts' 127.0.0.1,
// which only a client on vcsim's own machine reaches (a vcsim in a pod).
func HostsAtClientAddress(m *simulator.Model) {
	for _, h := range m.Map().All("HostSystem") {
		host := h.(*simulator.HostSystem)
		if host.Config == nil || host.Config.VirtualNicManagerInfo == nil {
			continue
		}
		for i := range host.Config.VirtualNicManagerInfo.NetConfig {
			nc := &host.Config.VirtualNicManagerInfo.NetConfig[i]
			for j := range nc.CandidateVnic {
				if nc.CandidateVnic[j].Spec.Ip != nil {
					nc.CandidateVnic[j].Spec.Ip.IpAddress = ""
				}
			}
		}
	}
}

// Guest returns a copy of what happened in a VM's guest.
func (g *GuestOps) Guest(vm string) Guest {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := Guest{Files: map[string][]byte{}}
	if in, ok := g.guests[vm]; ok {
		for k, v := range in.Files {
			out.Files[k] = append([]byte(nil), v...)
		}
		out.Processes = append(out.Processes, in.Processes...)
	}
	return out
}

func (g *GuestOps) guest(vm string) *Guest {
	if g.guests[vm] == nil {
		g.guests[vm] = &Guest{Files: map[string][]byte{}}
	}
	return g.guests[vm]
}

// check is what vSphere checks before any guest operation: a powered-on VM whose Tools run,
// and credentials the guest accepts.
func (g *GuestOps) check(ctx *simulator.Context, ref types.ManagedObjectReference, auth types.BaseGuestAuthentication) types.BaseMethodFault {
	vm, ok := ctx.Map.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return &types.ManagedObjectNotFound{Obj: ref}
	}
	var power types.VirtualMachinePowerState
	var tools string
	ctx.WithLock(vm, func() { power, tools = vm.Runtime.PowerState, vm.Guest.ToolsRunningStatus })
	if power != types.VirtualMachinePowerStatePoweredOn {
		return &types.InvalidPowerState{RequestedState: types.VirtualMachinePowerStatePoweredOn, ExistingState: power}
	}
	if tools != string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
		return &types.GuestOperationsUnavailable{}
	}
	creds, ok := auth.(*types.NamePasswordAuthentication)
	if !ok || creds.Username == "" || creds.Password == "" || (g.Password != "" && creds.Password != g.Password) {
		return &types.InvalidGuestLogin{}
	}
	return nil
}

type fileManager struct {
	mo.GuestFileManager
	ops *GuestOps
}

func (m *fileManager) MakeDirectoryInGuest(ctx *simulator.Context, req *types.MakeDirectoryInGuest) soap.HasFault {
	body := new(methods.MakeDirectoryInGuestBody)
	if f := m.ops.check(ctx, req.Vm, req.Auth); f != nil {
		body.Fault_ = simulator.Fault("", f)
		return body
	}
	body.Res = new(types.MakeDirectoryInGuestResponse)
	return body
}

func (m *fileManager) InitiateFileTransferToGuest(ctx *simulator.Context, req *types.InitiateFileTransferToGuest) soap.HasFault {
	body := new(methods.InitiateFileTransferToGuestBody)
	if f := m.ops.check(ctx, req.Vm, req.Auth); f != nil {
		body.Fault_ = simulator.Fault("", f)
		return body
	}
	u := m.ops.newTransfer(transfer{vm: req.Vm.Value, path: req.GuestFilePath, size: req.FileSize})
	body.Res = &types.InitiateFileTransferToGuestResponse{Returnval: u}
	return body
}

// serveTransfer stores a PUT file in its guest or answers the GET of one; a transfer URL works
// once.
func (g *GuestOps) serveTransfer(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, transferPath)
	g.mu.Lock()
	t, ok := g.pending[id]
	delete(g.pending, id)
	g.mu.Unlock()
	if ok && t.out && r.Method == http.MethodGet {
		g.serveDownload(w, t)
		return
	}
	if !ok || t.out || r.Method != http.MethodPut {
		http.Error(w, "unknown transfer", http.StatusNotFound)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, t.size+1))
	if err != nil || int64(len(data)) != t.size {
		http.Error(w, "size does not match the transfer", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.guest(t.vm).Files[t.path] = data
	g.mu.Unlock()
}

type processManager struct {
	mo.GuestProcessManager
	ops *GuestOps
}

func (m *processManager) StartProgramInGuest(ctx *simulator.Context, req *types.StartProgramInGuest) soap.HasFault {
	body := new(methods.StartProgramInGuestBody)
	if f := m.ops.check(ctx, req.Vm, req.Auth); f != nil {
		body.Fault_ = simulator.Fault("", f)
		return body
	}
	spec := req.Spec.GetGuestProgramSpec()
	m.ops.mu.Lock()
	m.ops.nextPid++
	p := Process{Pid: m.ops.nextPid, Program: spec.ProgramPath, Arguments: spec.Arguments,
		User: req.Auth.(*types.NamePasswordAuthentication).Username, Started: time.Now()}
	guest := m.ops.guest(req.Vm.Value)
	guest.Processes = append(guest.Processes, p)
	onStart := m.ops.OnStart
	m.ops.mu.Unlock()
	if onStart != nil {
		onStart(req.Vm.Value, p)
	}
	body.Res = &types.StartProgramInGuestResponse{Returnval: p.Pid}
	return body
}

func (m *processManager) ListProcessesInGuest(ctx *simulator.Context, req *types.ListProcessesInGuest) soap.HasFault {
	body := new(methods.ListProcessesInGuestBody)
	if f := m.ops.check(ctx, req.Vm, req.Auth); f != nil {
		body.Fault_ = simulator.Fault("", f)
		return body
	}
	body.Res = new(types.ListProcessesInGuestResponse)
	for _, p := range m.ops.Guest(req.Vm.Value).Processes {
		body.Res.Returnval = append(body.Res.Returnval, types.GuestProcessInfo{
			Name: p.Program, Pid: p.Pid, Owner: p.User, CmdLine: `"` + p.Program + `" ` + p.Arguments, StartTime: p.Started,
			EndTime: p.Ended, ExitCode: p.ExitCode})
	}
	return body
}
