package hyperv

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// Task references carry their host: "<host>/job:<id>" for a host job, "<host>/vm:<id>" for a
// create that finished at once.
const (
	jobPrefix = "job:"
	vmPrefix  = "vm:"
)

// backend is one reconcile's view of the Hyper-V hosts of a HyperVCluster for one HyperVMachine.
type backend struct {
	p       *Provider
	cluster *infrav1.HyperVCluster
	m       *infrav1.HyperVMachine
	hosts   map[string]HostConfig
	folders wire.Placement
	// resume is the host where Find saw a VM whose create was interrupted: Create finishes it
	// there instead of placing a new one.
	resume string
}

// ProviderID is the Hyper-V providerID of a VM: host is the host's name, or the failover
// cluster's (failover.go).
func ProviderID(host, id string) string { return "hyperv://" + host + "/" + id }

// parseProviderID splits hyperv://<host>/<id>.
func parseProviderID(pid string) (host, id string) {
	rest, ok := strings.CutPrefix(pid, "hyperv://")
	if !ok {
		return "", ""
	}
	host, id, _ = strings.Cut(rest, "/")
	return host, id
}

func (b *backend) key(s *hypervisor.Scope, id string) wire.VMKey {
	uid := s.InfraMachine.GetMachineStatus().VM.InstanceUUID
	if uid == "" {
		uid = string(s.InfraMachine.GetUID())
	}
	return wire.VMKey{Placement: b.folders, ID: id, UID: uid}
}

// Find reads the VM on its recorded host: status (written before a create is sent, so a lost
// answer is found there), else the providerID (after clusterctl move). Without a host, only a
// create that may have been sent is searched for, on every host: a host that cannot be asked
// then stops the search, so a VM is never created twice. A VM is returned only when its notes
// mark it as this object's (claim), else Find returns NotOwned. A VM whose create was interrupted
// is returned only to be deleted: otherwise Find reports none, and Create finishes it.
func (b *backend) Find(ctx context.Context, s *hypervisor.Scope) (*hypervisor.VM, error) {
	vm, err := b.find(ctx, s)
	return vm, doing("find VM "+s.InfraMachine.GetName(), err)
}

func (b *backend) find(ctx context.Context, s *hypervisor.Scope) (*hypervisor.VM, error) {
	st := s.InfraMachine.GetMachineStatus()
	host, id := st.VM.Host, st.VM.ID
	if host == "" {
		host, id = parseProviderID(*s.InfraMachine.GetProviderID())
	}
	if host != "" && b.folders.Cluster != "" {
		return b.findClustered(ctx, s, host, id)
	}
	if host != "" {
		return b.findOn(ctx, s, host, id)
	}
	if st.Task == "" {
		return nil, nil
	}
	for name := range b.hosts {
		vm, err := b.findOn(ctx, s, name, "")
		if err != nil || vm != nil {
			return vm, err
		}
	}
	return nil, nil
}

func (b *backend) findOn(ctx context.Context, s *hypervisor.Scope, host, id string) (*hypervisor.VM, error) {
	c, err := b.conn(host)
	if err != nil {
		return nil, err
	}
	var found wire.Found
	if err := c.Run(ctx, wire.OpFind, b.key(s, id), &found); err != nil {
		return nil, err
	}
	if !found.Found || found.VM == nil {
		return nil, nil
	}
	obj := s.InfraMachine
	owner := ownerOf(obj)
	m, why := claim(found.VM, []string{string(obj.GetUID()), obj.GetMachineStatus().VM.InstanceUUID}, owner)
	if why != "" {
		return nil, hypervisor.NotOwned("VM %s (%q) on host %s is not capwin's VM of HyperVMachine %s: %s; it is neither adopted nor changed nor deleted",
			found.VM.ID, found.VM.Name, host, owner, why)
	}
	if !m.complete && obj.GetDeletionTimestamp().IsZero() {
		// Its create was interrupted: the next Create finishes it; it is never started as it is.
		b.resume = host
		return nil, nil
	}
	if !s.Settled() {
		c.Follow(client.ObjectKeyFromObject(obj), found.VM)
	}
	return observe(host, b.providerHost(host), found.VM, m, b.m.Spec.DataDisks), nil
}

// Capabilities: the per-host peek wakes machines on their guests' news, and remove.ps1 turns a
// running VM off (Stop-VM -TurnOff) before it removes it.
func (b *backend) Capabilities() hypervisor.Capabilities {
	return hypervisor.Capabilities{GuestWatch: b, DestroyStops: true}
}

// GuestWatched reports whether the guest watch of the VM's host follows the machine's VM and
// its host answers (see guestWatch).
func (b *backend) GuestWatched(s *hypervisor.Scope) bool {
	c := b.hostConn(s.InfraMachine.GetMachineStatus().VM.Host)
	return c != nil && c.GuestWatched(client.ObjectKeyFromObject(s.InfraMachine))
}

// Settled lets the guest watch of the VM's host forget the machine.
func (b *backend) Settled(s *hypervisor.Scope) {
	if c := b.hostConn(s.InfraMachine.GetMachineStatus().VM.Host); c != nil {
		c.Forget(client.ObjectKeyFromObject(s.InfraMachine))
	}
}

// hostConn is the connection of the cluster's host, nil when there is none.
func (b *backend) hostConn(host string) *Conn {
	if host == "" {
		return nil
	}
	c, err := b.conn(host)
	if err != nil {
		return nil
	}
	return c
}

// observe turns a VM view into the lifecycle's view of it; pidHost is the providerID's host part.
// Only a VM whose create finished has its bootstrap data in place.
func observe(host, pidHost string, v *wire.View, m mark, disks []infrav1.HyperVDataDisk) *hypervisor.VM {
	vm := &hypervisor.VM{
		Ref:        infrav1.VMReference{ID: v.ID, Host: host, InstanceUUID: m.uid},
		ProviderID: ProviderID(pidHost, v.ID), Power: power(v.State), Delivered: m.complete,
		Report: v.KVP[wire.StatusKVPValue], ToolsRunning: v.Heartbeat, GuestRunStarted: noteValue(v.Notes, noteGuestRun) != "",
		DataDisks: observeDataDisks(disks, v),
		// A generation 2 VM always boots with UEFI firmware.
		Security: infrav1.SecurityStatus{Firmware: infrav1.FirmwareEFI, SecureBoot: v.SecureBoot, TPM: v.TPM},
	}
	for _, n := range v.NICs {
		vm.MACs = append(vm.MACs, guest.NormalizeMAC(n.MAC))
		vm.IPs = append(vm.IPs, n.IPs...)
	}
	for _, d := range v.DVDs {
		if strings.HasSuffix(strings.ToLower(d), `\cidata.iso`) {
			vm.UserDataPresent = true
		}
	}
	return vm
}

func power(state string) hypervisor.PowerState {
	switch state {
	case "Running", "Starting", "Stopping":
		return hypervisor.PoweredOn
	case "Saved", "Paused":
		return hypervisor.Suspended
	}
	return hypervisor.PoweredOff
}

// Task reports a host job, or a create that already finished.
func (b *backend) Task(ctx context.Context, _ *hypervisor.Scope, ref string) (hypervisor.Task, error) {
	host, rest, _ := strings.Cut(ref, "/")
	if id, ok := strings.CutPrefix(rest, vmPrefix); ok {
		return hypervisor.Task{State: hypervisor.TaskSucceeded, VM: infrav1.VMReference{ID: id, Host: host}}, nil
	}
	job, ok := strings.CutPrefix(rest, jobPrefix)
	if !ok {
		return hypervisor.Task{State: hypervisor.TaskUnknown}, nil
	}
	c, err := b.conn(host)
	if err != nil {
		return hypervisor.Task{}, doing("read job "+job, err)
	}
	var js wire.JobState
	if err := c.Run(ctx, wire.OpJob, wire.JobRef{Job: job}, &js); err != nil {
		if b.folders.Cluster != "" && KindOf(err) != wire.KindInvalidSpec {
			// The node may have failed and the cluster moved the VM: its job is not read again,
			// the VM's state (found through the cluster) tells what happened.
			return hypervisor.Task{State: hypervisor.TaskUnknown, Message: err.Error()}, nil
		}
		return hypervisor.Task{}, err
	}
	t := hypervisor.Task{State: hypervisor.TaskUnknown, Message: js.Message}
	switch js.State {
	case "running":
		t.State = hypervisor.TaskRunning
	case "succeeded":
		t.State = hypervisor.TaskSucceeded
	case "failed":
		t.State = hypervisor.TaskFailed
	}
	return t, nil
}

// jobRef stores a job reference with its host ("" when the operation finished at once).
func jobRef(host string, r wire.JobRef) string {
	if r.Job == "" {
		return ""
	}
	return host + "/" + jobPrefix + r.Job
}

func (b *backend) powerAction(ctx context.Context, vm *hypervisor.VM, action string) (string, error) {
	c, err := b.conn(vm.Ref.Host)
	if err != nil {
		return "", doing(powerWords[action]+" VM "+vm.Ref.ID, err)
	}
	var r wire.JobRef
	if err := c.Run(ctx, wire.OpPower, wire.PowerInput{ID: vm.Ref.ID, Action: action}, &r); err != nil {
		return "", err
	}
	return jobRef(vm.Ref.Host, r), nil
}

// PowerOn starts the VM (a host job).
func (b *backend) PowerOn(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	return b.powerAction(ctx, vm, wire.PowerStart)
}

// PowerOff turns the VM off (hard) or asks the guest to shut down.
func (b *backend) PowerOff(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM, hard bool) (string, error) {
	if hard {
		return b.powerAction(ctx, vm, wire.PowerOff)
	}
	return b.powerAction(ctx, vm, wire.PowerShutdown)
}

// Destroy removes the VM, its differencing disk and its folder.
func (b *backend) Destroy(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	c, err := b.conn(vm.Ref.Host)
	if err != nil {
		return "", doing("delete VM "+vm.Ref.ID, err)
	}
	return "", c.Run(ctx, wire.OpRemove, b.key(s, vm.Ref.ID), nil)
}

// ClearUserData ejects and deletes the config drive (it holds the join token).
func (b *backend) ClearUserData(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	c, err := b.conn(vm.Ref.Host)
	if err != nil {
		return "", doing("eject the config drive of VM "+vm.Ref.ID, err)
	}
	return "", c.Run(ctx, wire.OpEject, b.key(s, vm.Ref.ID), nil)
}

// Deliver has nothing to do: every NIC gets its MAC at create, so the config drive is complete.
func (b *backend) Deliver(context.Context, *hypervisor.Scope, *hypervisor.VM) (string, error) {
	return "", fmt.Errorf("hyperv: the config drive is written at create")
}

var _ hypervisor.Backend = (*backend)(nil)
