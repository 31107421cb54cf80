// Package hypervisor is the contract between the machine reconciler and the hypervisor
// backends (vCenter in pkg/vcenter, Hyper-V in pkg/hyperv): what one reconcile knows about a
// machine (Scope), what a backend observed (VM, Task), the calls a backend answers (Backend, and
// the optional Watcher), and the errors that steer the reconciler (Error, CreatePending,
// Throttled). It imports no reconciler and no backend: the arrows run from the reconciler and the
// backends into it.
package hypervisor

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// Object is an infrastructure machine of either kind (VCenterMachine, HyperVMachine).
type Object interface {
	client.Object
	conditions.Setter
	GetMachineStatus() *infrav1.MachineStatus
	GetProviderID() *string
}

// MachineSpec is the part of a machine's spec that the lifecycle reconciler reads, whatever the
// kind: an in-memory view, never serialized.
type MachineSpec struct {
	OS                       infrav1.OperatingSystem
	Network                  []infrav1.NetworkDevice
	PowerOffMode             infrav1.PowerOffMode
	GuestSoftPowerOffTimeout *metav1.Duration
	GuestCredentialsRef      *infrav1.SecretReference
	NamingStrategy           *infrav1.NamingStrategy
}

// SpecOf reads the MachineSpec of a VCenterMachine or a HyperVMachine (a zero MachineSpec for
// another kind).
func SpecOf(obj Object) MachineSpec {
	switch m := obj.(type) {
	case *infrav1.VCenterMachine:
		return MachineSpec{OS: m.Spec.OS, Network: m.GetNetworkDevices(), PowerOffMode: m.Spec.PowerOffMode,
			GuestSoftPowerOffTimeout: m.Spec.GuestSoftPowerOffTimeout, GuestCredentialsRef: m.Spec.GuestCredentialsRef,
			NamingStrategy: m.Spec.NamingStrategy}
	case *infrav1.HyperVMachine:
		return MachineSpec{OS: m.Spec.OS, Network: m.GetNetworkDevices(), PowerOffMode: m.Spec.PowerOffMode,
			GuestSoftPowerOffTimeout: m.Spec.GuestSoftPowerOffTimeout, GuestCredentialsRef: m.Spec.GuestCredentialsRef,
			NamingStrategy: m.Spec.NamingStrategy}
	}
	return MachineSpec{}
}

// Scope is everything one reconcile knows about one machine; backends read it, never write the
// objects in it (the reconciler owns status and patching).
type Scope struct {
	Cluster      *clusterv1.Cluster
	Machine      *clusterv1.Machine
	InfraCluster client.Object
	InfraMachine Object
	Spec         MachineSpec
	// ComputerName is the guest's hostname (NetBIOS-safe for Windows).
	ComputerName string
	// NICs are the network devices with static and IPAM addresses resolved; MACs are filled by
	// the backend from the VM.
	NICs []guest.NIC
	// UserData and Format are the bootstrap Secret's value and format.
	UserData []byte
	Format   string
	// GuestCredentials log in to the guest OS when the bootstrap data is run through the
	// hypervisor's guest agent (spec.guestCredentialsRef); nil otherwise.
	GuestCredentials *GuestCredentials
	// CreateMayRun is true when an earlier create of this object may have reached the hypervisor
	// and its VM has not shown up within the grace period: Create must not start another while
	// that one may still be running (it returns a *CreatePending instead).
	CreateMayRun bool
	// Watched is true when the backend's hypervisor reports the changes of this machine's VM and
	// tasks (a wake): they are then polled only as a safety net.
	Watched bool
	// GuestWatched is true when the guest's news (addresses, bootstrap reports) wake the machine,
	// by Watched or by a GuestWatcher: the guest is then read only as a safety net.
	GuestWatched bool
}

// Settled reports whether the machine is done with its VM for now: provisioned, not being
// deleted, and its Machine has its Node. A watch need not follow its VM any more.
func (s *Scope) Settled() bool {
	obj := s.InfraMachine
	return ptr.Deref(obj.GetMachineStatus().Initialization.Provisioned, false) && obj.GetDeletionTimestamp().IsZero() &&
		s.Machine != nil && s.Machine.Status.NodeRef.IsDefined()
}

// GuestCredentials are a guest OS account (an administrator of the template image).
type GuestCredentials struct {
	Username, Password string
	// Source says where they come from, for messages ("" is spec.guestCredentialsRef).
	Source string
}

// RunsInGuest reports whether the bootstrap data is run by capwin through the hypervisor's guest
// agent (images without cloudbase-init) instead of being read by the guest from the VM config.
func (s *Scope) RunsInGuest() bool { return s.Spec.GuestCredentialsRef != nil }

// Linux reports whether the guest is Linux (cloud-init) rather than Windows (cloudbase-init).
func (s *Scope) Linux() bool { return s.Spec.OS == infrav1.OSLinux }

// PowerState of a VM.
type PowerState string

// Power states.
const (
	PoweredOn  PowerState = "on"
	PoweredOff PowerState = "off"
	Suspended  PowerState = "suspended"
)

// VM is what a backend observed about a machine's VM in one read.
type VM struct {
	Ref        infrav1.VMReference
	ProviderID string
	Power      PowerState
	// MACs of the VM's NICs in device order.
	MACs []string
	// IPs of the VM's own NICs as the guest reports them (unfiltered, NIC order).
	IPs []string
	// Delivered is true when the bootstrap data (metadata + user data) is in place.
	Delivered bool
	// UserDataPresent is true while the user data (bootstrap token) is readable in the VM config.
	UserDataPresent bool
	// Report is the guest's raw bootstrap status report, "" when it wrote none.
	Report string
	// ToolsRunning is true when the guest agent (VMware Tools / integration services) runs.
	ToolsRunning bool
	// GuestRunStarted is true once RunInGuest started the bootstrap data in the guest.
	GuestRunStarted bool
	// DataDisks are the VM's data disks (spec.dataDisks) with the SCSI address the guest sees
	// each at, in spec order; the reconciler copies them into status.dataDisks.
	DataDisks []infrav1.DataDiskStatus
	// Security is the VM's firmware, Secure Boot and TPM.
	Security infrav1.SecurityStatus
}

// TaskState of a hypervisor task.
type TaskState string

// Task states. TaskUnknown means the hypervisor no longer knows the task (it forgets finished
// tasks, or it restarted): the VM itself must be looked at.
const (
	TaskRunning   TaskState = "running"
	TaskSucceeded TaskState = "succeeded"
	TaskFailed    TaskState = "failed"
	TaskUnknown   TaskState = "unknown"
)

// Task is a task's progress.
type Task struct {
	State   TaskState
	Message string
	// VM is the VM a finished create task returned (empty otherwise): the next Find can read it
	// directly instead of searching.
	VM infrav1.VMReference
}

// Backend is one hypervisor API. Methods that start long work return a task reference ("" when
// the work finished synchronously); the reconciler stores it in status and polls it with Task.
// What only some hypervisors can do is in Capabilities.
type Backend interface {
	// Find returns the machine's VM, or nil when the hypervisor has none. It must find a VM
	// created by an earlier Create even if status was lost (identity = object UID). A VM found
	// through a reference the user can write (spec.providerID) that lacks capwin's ownership mark
	// for this object is never returned: Find returns NotOwned instead.
	Find(ctx context.Context, s *Scope) (*VM, error)
	// Task reports a task returned earlier, with the VM observed in the same read when possible.
	Task(ctx context.Context, s *Scope, ref string) (Task, error)
	// Create starts creating the VM from its template with hardware and user data, powered off
	// unless the bootstrap data is complete without the VM's MACs (or the backend must place it
	// before its first power-on: vCenter's anti-affinity rule). An error that leaves open
	// whether the hypervisor started the create is a *CreatePending. Create records through
	// intent what it is about to do, before it asks the hypervisor.
	Create(ctx context.Context, s *Scope, intent Intent) (string, error)
	// Deliver writes the bootstrap data that needs the VM's MACs (metadata with network config).
	Deliver(ctx context.Context, s *Scope, vm *VM) (string, error)
	PowerOn(ctx context.Context, s *Scope, vm *VM) (string, error)
	// PowerOff stops the VM: hard cuts power, otherwise the guest is asked to shut down.
	PowerOff(ctx context.Context, s *Scope, vm *VM, hard bool) (string, error)
	Destroy(ctx context.Context, s *Scope, vm *VM) (string, error)
	// ClearUserData removes the user data from the VM config once the node has joined.
	ClearUserData(ctx context.Context, s *Scope, vm *VM) (string, error)
	// RunInGuest copies the bootstrap data into the running guest with s.GuestCredentials and
	// starts it once (a program already started is found, not started again), then records that
	// on the VM so GuestRunStarted turns true. A *Error means the guest refused the credentials.
	RunInGuest(ctx context.Context, s *Scope, vm *VM) (string, error)
	// CollectLogs runs the log collector with request id id (guest.NewCollect) in the running
	// guest with s.GuestCredentials, once, and returns the zip it made; done is false while it
	// still runs (ask again later). The collector's files are removed from the guest once read.
	// A *Error means the guest refused the credentials.
	CollectLogs(ctx context.Context, s *Scope, vm *VM, id string) (zip []byte, done bool, err error)
	// Capabilities are the backend's optional features.
	Capabilities() Capabilities
}

// Intent records what a create is about to do, durably (in the machine's status) and before the
// hypervisor is asked, so that a restarted manager finds the VM and counts the place it chose.
// Create calls it in the middle of its work, between its last lookup and the call that acts,
// which a return value could not do. A method that fails stops Create: nothing may be sent.
type Intent interface {
	// Place records where the VM will be made (the Hyper-V host) before Create asks that place
	// anything ahead of Commit (a parent disk copy): the placement of other machines counts it.
	Place(where infrav1.VMReference) error
	// Commit records that a create is about to be sent, right before the call that creates the
	// VM. where is the part of the VM's reference already known (the Hyper-V host), so Find
	// looks there if the create's answer is lost.
	Commit(where infrav1.VMReference) error
}

// Capabilities are what a backend can do besides Backend's methods, in one value the reconciler
// reads instead of asking for optional interfaces: a nil member, or false, is a feature the
// backend's hypervisor lacks.
type Capabilities struct {
	// Watch: the hypervisor reports the changes of VMs and tasks (vCenter's property collector).
	Watch Watcher
	// GuestWatch: the guest's news wake the machine while its tasks are polled (Hyper-V's
	// per-host peek).
	GuestWatch GuestWatcher
	// Tags: the hypervisor tags VMs (vCenter's tagging service).
	Tags Tagger
	// DestroyStops: Destroy turns a running VM off itself (Hyper-V's remove.ps1), so a delete
	// that would cut the power first skips that step and its task.
	DestroyStops bool
}

// BackendFor builds the backend of one reconcile (chosen once, from the kind being reconciled).
type BackendFor func(ctx context.Context, s *Scope) (Backend, error)

// Watcher is a backend whose hypervisor reports changes (Capabilities.Watch: the vCenter session's
// property collector does; Hyper-V has no such feed: its tasks are polled, and its guests are read
// by the host's peek, a GuestWatcher).
type Watcher interface {
	// Watched reports whether the hypervisor reports the changes of this machine's VM and tasks
	// (a wake); they are then polled only as a safety net (Scope.Watched).
	Watched() bool
	// Settled tells the backend the machine is done (provisioned, its Node linked, its user data
	// cleared): its VM need not be followed any more.
	Settled(s *Scope)
}

// GuestWatcher is a backend whose hypervisor's guest news wake the machine while its tasks are
// still polled (Capabilities.GuestWatch: Hyper-V's per-host peek). The reconciler asks it after
// Find.
type GuestWatcher interface {
	// GuestWatched reports whether the guest's news of this machine's VM wake the machine
	// (Scope.GuestWatched).
	GuestWatched(s *Scope) bool
	// Settled: see Watcher.
	Settled(s *Scope)
}

// Tagger is a backend whose hypervisor tags VMs (Capabilities.Tags: vCenter's tagging service;
// Hyper-V has none). The reconciler calls it on every reconcile of an existing VM, after Deliver and before PowerOn, so the VM has its
// tags before its first boot.
type Tagger interface {
	// Tag attaches the machine's tags (spec) that its VM lacks and returns them with their ids,
	// for status. It makes no call when status already reports them all. A tag or category
	// that does not exist is a *Error (InvalidSpec) naming it.
	Tag(ctx context.Context, s *Scope, vm *VM) ([]infrav1.VCenterTagStatus, error)
}
