package vcenter

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// faultCases has one row per vSphere fault capwin words: the fault and what its words must say
// (what happened, the object, what to do).
var faultCases = []struct {
	fault types.BaseMethodFault
	words []string
}{
	{&types.DuplicateName{Name: "win-md-0-x", Object: vmRef("vm-9")},
		[]string{"a VM named win-md-0-x, not created by capwin for this machine, already exists in folder /dc0/vm/capwin: rename or remove it"}},
	{&types.VmAlreadyExistsInDatacenter{Hostname: "esx-1"}, []string{"VM win-md-0-x", "esx-1", "unregister or remove"}},
	{&types.AlreadyExists{Name: "win-md-0-x"}, []string{"win-md-0-x already exists", "rename or remove"}},
	{&types.InvalidName{Name: "win/md"}, []string{`name "win/md"`, "80 characters", "rename the machine"}},
	{&types.FileAlreadyExists{FileFault: types.FileFault{File: "[ds1] win-md-0-x/win-md-0-x.vmx"}},
		[]string{"[ds1] win-md-0-x/win-md-0-x.vmx", "VM win-md-0-x", "already exists on ds1", "delete it from the datastore"}},
	{&types.NoDiskSpace{FileFault: types.FileFault{File: "win-md-0-x.vmdk"}, Datastore: "ds1"}, []string{"datastore ds1 has no free space", "win-md-0-x.vmdk", "spec.placement.datastore"}},
	{&types.CannotCreateFile{FileFault: types.FileFault{File: "[ds1] win-md-0-x"}}, []string{"could not create file [ds1] win-md-0-x on ds1", "writable"}},
	{&types.FileNotFound{FileFault: types.FileFault{File: "[ds1] w2022/w2022.vmdk"}}, []string{"[ds1] w2022/w2022.vmdk is missing", "replace w2022"}},
	{&types.FileLocked{FileFault: types.FileFault{File: "[ds1] w2022/w2022.vmdk"}}, []string{"locked by another VM or host", "[ds1] w2022/w2022.vmdk"}},
	{&types.CannotAccessFile{FileFault: types.FileFault{File: "[ds1] a.iso"}}, []string{"file [ds1] a.iso cannot be used"}},
	{&types.NotAuthenticated{}, []string{"vCenter session ended", "logs in again"}},
	{&types.NoPermission{Object: &types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-10"}, PrivilegeId: "VirtualMachine.Provisioning.Clone"},
		[]string{"lacks privilege VirtualMachine.Provisioning.Clone on VirtualMachine vm-10", "docs/vcenter/install.md"}},
	{&types.NoPermission{MissingPrivileges: []types.NoPermissionEntityPrivileges{{Entity: types.ManagedObjectReference{Type: "Folder", Value: "group-v3"},
		PrivilegeIds: []string{"VirtualMachine.Inventory.CreateFromExisting"}}}}, []string{"VirtualMachine.Inventory.CreateFromExisting on Folder group-v3"}},
	{&types.InvalidLogin{}, []string{"refused the user name or password", "identity Secret"}},
	{&types.InvalidGuestLogin{}, []string{"guest of VM win-md-0-x refused", "spec.guestCredentialsRef"}},
	{&types.GuestOperationsUnavailable{}, []string{"VMware Tools in VM win-md-0-x", "retries"}},
	{&types.InsufficientMemoryResourcesFault{Unreserved: 1 << 30, Requested: 8 << 30}, []string{"resource pool pool-a has 1024 MiB of memory unreserved, VM win-md-0-x asks 8192 MiB", "spec.memoryMiB"}},
	{&types.InsufficientCpuResourcesFault{Unreserved: 1000, Requested: 4000}, []string{"resource pool pool-a has 1000 MHz", "asks 4000 MHz", "spec.numCPUs"}},
	{&types.InsufficientHostCapacityFault{Host: &types.ManagedObjectReference{Type: "HostSystem", Value: "host-21"}}, []string{"HostSystem host-21 has not enough capacity for VM win-md-0-x"}},
	{&types.InsufficientHostMemoryCapacityFault{}, []string{"no host of the cluster has enough capacity for VM win-md-0-x"}},
	{&types.InsufficientStorageSpace{}, []string{"ds1 has not enough space for VM win-md-0-x"}},
	{&types.InsufficientFailoverResourcesFault{}, []string{"HA admission control", "VM win-md-0-x may not start"}},
	{&types.InsufficientResourcesFault{}, []string{"resource pool pool-a lacks the resources", "VM win-md-0-x"}},
	{&types.NotEnoughLicenses{}, []string{"not enough licenses", "renew"}},
	{&types.LicenseExpired{}, []string{"not enough licenses (or one expired)"}},
	{&types.OutOfBounds{ArgumentName: "numCPUs"}, []string{"numCPUs is out of the bounds", "machine's spec"}},
	{&types.InvalidPowerState{ExistingState: "poweredOn", RequestedState: "poweredOff"}, []string{"VM win-md-0-x is powered on, and this needs it powered off"}},
	{&types.QuestionPending{Text: "Did you move it?"}, []string{"VM win-md-0-x waits for an answer", "Did you move it?", "vSphere client"}},
	{&types.InvalidHostState{Host: &types.ManagedObjectReference{Type: "HostSystem", Value: "host-21"}}, []string{"HostSystem host-21 is in a state", "maintenance mode"}},
	{&types.InvalidState{}, []string{"VM win-md-0-x is in a state that does not allow it", "retries"}},
	{&types.TaskInProgress{Task: types.ManagedObjectReference{Type: "Task", Value: "task-7"}}, []string{"task task-7 still runs on VM win-md-0-x"}},
	{&types.ConcurrentAccess{}, []string{"VM win-md-0-x was changed by someone else"}},
	{&types.ManagedObjectNotFound{Obj: vmRef("vm-42")}, []string{"VirtualMachine vm-42 no longer exists in vCenter"}},
	{&types.RequestCanceled{}, []string{"canceled in vCenter", "tries again"}},
	{&types.DatastoreNotWritableOnHost{InvalidDatastore: types.InvalidDatastore{Name: "ds1"}, Host: types.ManagedObjectReference{Type: "HostSystem", Value: "host-21"}},
		[]string{"datastore ds1 cannot be written from HostSystem host-21"}},
	{&types.InvalidDatastorePath{DatastorePath: "[ds9] x"}, []string{`datastore path "[ds9] x" is not valid`}},
	{&types.InvalidDatastore{Name: "ds1"}, []string{"datastore ds1 cannot be used for VM win-md-0-x", "spec.placement.datastore"}},
	{&types.CannotAccessNetwork{}, []string{"a network of VM win-md-0-x cannot be reached", "spec.network"}},
	{&types.InvalidDeviceSpec{DeviceIndex: 2}, []string{"device 2 of the configuration of VM win-md-0-x is not valid", "spec.network"}},
	{&types.InvalidController{}, []string{"device 0 of the configuration of VM win-md-0-x"}},
	{&types.InvalidArgument{InvalidProperty: "spec.location.pool"}, []string{"refused the value of spec.location.pool"}},
	{&types.NotEnoughCpus{}, []string{"cannot run the hardware of VM win-md-0-x", "CPU count"}},
	{&types.InvalidVmConfig{Property: "config.memoryMB"}, []string{"configuration of VM win-md-0-x is not valid (config.memoryMB)"}},
	{&types.VmConfigFault{}, []string{"refused the configuration of VM win-md-0-x"}},
	{&types.NoCompatibleHost{}, []string{"no host of the cluster can run VM win-md-0-x"}},
	{&types.InvalidFolder{}, []string{"folder /dc0/vm/capwin cannot hold VMs", "spec.placement.folder"}},
	{&types.NotSupported{}, []string{"does not support it"}},
	{&types.HostNotConnected{}, []string{"ESXi host of VM win-md-0-x does not answer vCenter", "reconnect"}},
	{&types.HostNotReachable{}, []string{"ESXi host of VM win-md-0-x does not answer vCenter"}},
	{&types.HostCommunication{}, []string{"ESXi host of VM win-md-0-x does not answer vCenter"}},
	{&types.Timedout{}, []string{"vCenter timed out", "retries"}},
	{&types.SystemError{Reason: "disk error"}, []string{"internal error (disk error)"}},
	{&types.VmFaultToleranceIssue{}, []string{"vSphere could not do it"}},
}

var clone = subject{action: "clone VM win-md-0-x from template w2022", vm: "win-md-0-x", folder: "/dc0/vm/capwin", template: "w2022",
	datastore: "ds1", pool: "pool-a"}

// TestFaultWords: a call that failed with a fault names the action, says what happened to which
// object and what to do, keeps vCenter's message and ends with the fault's name; fault.Is still
// sees the fault, and the VMProvisioned reason is the one of the bare fault.
func TestFaultWords(t *testing.T) {
	for _, tc := range faultCases {
		name := reflect.TypeOf(tc.fault).Elem().Name()
		t.Run(name, func(t *testing.T) {
			bare := soap.WrapVimFault(tc.fault)
			err := callError(clone, fmt.Errorf("look up the template: %w", bare))
			msg := err.Error()
			want := append([]string{clone.action + ": look up the template: ", "(vSphere fault " + name + ")"}, tc.words...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Count(msg, clone.action) != 1 || strings.Contains(msg, "[vCenter:") {
				t.Errorf("action twice, or vCenter's message that only names the fault: %q", msg)
			}
			if !fault.Is(err, tc.fault) || !errors.Is(err, bare) {
				t.Errorf("the fault is lost in %v", err)
			}
			if got, want := hypervisor.Reason(err), hypervisor.Reason(bare); got != want || got != infrav1.HypervisorErrorReason {
				t.Errorf("Reason = %q, want %q", got, want)
			}
			again := callError(subject{action: "reconcile"}, err)
			if strings.Count(again.Error(), "(vSphere fault") != 1 {
				t.Errorf("fault worded twice: %q", again)
			}

			// A failed task: the same words, vCenter's message as detail (not vcsim's type name).
			task := taskMessage(clone, types.LocalizedMethodFault{Fault: tc.fault, LocalizedMessage: "vCenter's own words."})
			for _, w := range append(want[1:], clone.action+": ", "[vCenter: vCenter's own words.]") {
				if !strings.Contains(task, w) {
					t.Errorf("task message %q lacks %q", task, w)
				}
			}
			vcsim := taskMessage(clone, types.LocalizedMethodFault{Fault: tc.fault, LocalizedMessage: fmt.Sprintf("%T", tc.fault)})
			if strings.Contains(vcsim, "[vCenter:") {
				t.Errorf("vcsim's type name kept as detail: %q", vcsim)
			}
		})
	}
}

// TestCallErrorPlain: an error that is no fault gets the action in front; terminal errors keep
// their reason.
func TestCallErrorPlain(t *testing.T) {
	if callError(clone, nil) != nil {
		t.Fatal("nil is no error")
	}
	err := callError(clone, hypervisor.Errorf(infrav1.InvalidSpecReason, "template %q not found in vCenter", "w2022"))
	if err.Error() != `clone VM win-md-0-x from template w2022: template "w2022" not found in vCenter` {
		t.Errorf("got %q", err)
	}
	if hypervisor.Reason(err) != infrav1.InvalidSpecReason {
		t.Errorf("Reason = %q", hypervisor.Reason(err))
	}
	pending := callError(clone, &hypervisor.CreatePending{Err: errors.New("no answer from vCenter: connection reset")})
	if p := (*hypervisor.CreatePending)(nil); !errors.As(pending, &p) {
		t.Errorf("CreatePending lost in %v", pending)
	}
	throttled := callError(clone, &hypervisor.Throttled{Message: "20 tasks of this manager run"})
	if hypervisor.Reason(throttled) != infrav1.WaitingForTaskSlotReason {
		t.Errorf("Throttled lost in %v", throttled)
	}
	login := &session.LoginError{Reason: infrav1.AuthenticationFailedReason, Err: errors.New("log in to vCenter vc:443 as capwin: vCenter refused")}
	if Reason(fmt.Errorf("check: %w", login)) != infrav1.AuthenticationFailedReason {
		t.Errorf("login error: %v", login)
	}
	worded := callError(subject{action: "read the login"}, &session.LoginError{Reason: infrav1.AuthenticationFailedReason,
		Err: session.CallError("log in to vCenter vc:443 as capwin", soap.WrapVimFault(&types.InvalidLogin{}), clone.words)})
	if strings.Count(worded.Error(), "(vSphere fault") != 1 {
		t.Errorf("a login's fault worded twice: %q", worded)
	}
}
