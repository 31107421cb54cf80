package vcenter

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"
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

// faultError is a vSphere call that failed with a fault: the action, the fault in words, vCenter's
// own message and the fault's name. The call's error stays wrapped, so fault.Is and errors.As
// see through it.
type faultError struct {
	msg string
	err error
}

func (e *faultError) Error() string { return e.msg }
func (e *faultError) Unwrap() error { return e.err }

// callError names the action of a failed vSphere call and, when vCenter answered with a fault
// not yet in words, says in words what happened and what to do. nil stays nil.
func callError(on subject, err error) error {
	if err == nil {
		return nil
	}
	var f types.BaseMethodFault
	var done *faultError
	if _, ok := fault.As(err, &f); !ok || f == nil || errors.As(err, &done) {
		return fmt.Errorf("%s: %w", on.action, err)
	}
	// The words take the place of the innermost error (vCenter's answer); what wrapped it stays.
	inner := err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
		inner = u
	}
	wrappers := strings.TrimSuffix(err.Error(), inner.Error())
	says := strings.TrimPrefix(inner.Error(), "ServerFaultCode: ")
	return &faultError{msg: on.action + ": " + wrappers + faultMessage(on, f, says), err: err}
}

// taskMessage is the message of a task that failed with a fault.
func taskMessage(on subject, f types.LocalizedMethodFault) string {
	if f.Fault == nil {
		return on.action + ": " + f.LocalizedMessage
	}
	return on.action + ": " + faultMessage(on, f.Fault, f.LocalizedMessage)
}

// faultMessage is a fault in words, then vCenter's own message when it says more than the fault's
// name, then the fault's name: "<words> [vCenter: <detail>] (vSphere fault DuplicateName)".
func faultMessage(on subject, f types.BaseMethodFault, detail string) string {
	name := faultName(f)
	msg := cmp.Or(keyProviderWords(on, detail), faultWords(on, f))
	if detail = strings.TrimSpace(detail); detail != "" && strings.TrimPrefix(detail, "*types.") != name {
		msg += " [vCenter: " + detail + "]"
	}
	return msg + " (vSphere fault " + name + ")"
}

// faultName is the vSphere name of a fault's type ("DuplicateName").
func faultName(f types.BaseMethodFault) string {
	t := reflect.TypeOf(f)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// refName names a managed object for people: its type and id ("VirtualMachine vm-42").
func refName(r *types.ManagedObjectReference) string {
	if r == nil || r.Value == "" {
		return ""
	}
	return r.Type + " " + r.Value
}
