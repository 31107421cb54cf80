package vcenter

import (
	"cmp"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// subject is what a vSphere call acts on, for the words of its errors: the action with its object
// and the objects a fault may be about. A field that does not apply is "".
type subject struct {
	// action is the call in words with its object: "clone VM win-md-0-x from template w2022".
	action string
	// vm is the VM's name, folder the inventory path of the folder it is (or goes) in.
	vm, folder string
	// template is the template a clone copies; datastore and pool are the placement asked for.
	template, datastore, pool string
	// vtpm: the machine asks for a vTPM, which vSphere refuses without a key provider.
	vtpm bool
	// pci: the machine asks for PCI devices (GPUs), which only some hosts have free.
	pci bool
}

// vmName names the VM: "VM win-md-0-x", or "the VM".
func (on subject) vmName() string {
	if on.vm == "" {
		return "the VM"
	}
	return "VM " + on.vm
}

// where names the VM's folder: "folder /dc0/vm/capwin", or "the VM folder".
func (on subject) where() string {
	if on.folder == "" {
		return "the VM folder"
	}
	return "folder " + on.folder
}

// words says what a fault means for the call on its subject and what to do (vCenter's message,
// detail, names a missing key provider).
func (on subject) words(f types.BaseMethodFault, detail string) string {
	return cmp.Or(keyProviderWords(on, detail), faultWords(on, f))
}

// callError names the action of a failed vSphere call and, when vCenter answered with a fault
// not yet in words, says in words what happened and what to do. nil stays nil.
func callError(on subject, err error) error {
	return session.CallError(on.action, err, on.words)
}

// taskMessage is the message of a task that failed with a fault.
func taskMessage(on subject, f types.LocalizedMethodFault) string {
	if f.Fault == nil {
		return on.action + ": " + f.LocalizedMessage
	}
	return on.action + ": " + session.FaultMessage(on.words(f.Fault, f.LocalizedMessage), f.Fault, f.LocalizedMessage)
}

// refName names a managed object for people: its type and id ("VirtualMachine vm-42").
func refName(r *types.ManagedObjectReference) string {
	if r == nil || r.Value == "" {
		return ""
	}
	return r.Type + " " + r.Value
}
