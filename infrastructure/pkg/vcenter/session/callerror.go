package session

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"
)

// faultError is a vSphere call that failed with a fault: the action, the fault in words, vCenter's
// own message and the fault's name. The call's error stays wrapped, so fault.Is and errors.As
// see through it.
type faultError struct {
	msg string
	err error
}

func (e *faultError) Error() string { return e.msg }
func (e *faultError) Unwrap() error { return e.err }

// CallError names the action of a failed vSphere call and, when vCenter answered with a fault
// not yet in words, says in words what happened and what to do: words(fault, vCenter's message),
// as FaultMessage puts them. nil stays nil.
func CallError(action string, err error, words func(f types.BaseMethodFault, detail string) string) error {
	if err == nil {
		return nil
	}
	var f types.BaseMethodFault
	var done *faultError
	if _, ok := fault.As(err, &f); !ok || f == nil || errors.As(err, &done) {
		return fmt.Errorf("%s: %w", action, err)
	}
	// The words take the place of the innermost error (vCenter's answer); what wrapped it stays.
	inner := err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
		inner = u
	}
	wrappers := strings.TrimSuffix(err.Error(), inner.Error())
	says := strings.TrimPrefix(inner.Error(), "ServerFaultCode: ")
	return &faultError{msg: action + ": " + wrappers + FaultMessage(words(f, says), f, says), err: err}
}

// FaultMessage is a fault in words, then vCenter's own message when it says more than the fault's
// name, then the fault's name: "<words> [vCenter: <detail>] (vSphere fault DuplicateName)".
func FaultMessage(words string, f types.BaseMethodFault, detail string) string {
	name := faultName(f)
	msg := words
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
