package hyperv

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// HostError is a failed host operation. Its message says what capwin did on which host, what
// went wrong in words, the host's own message, and what the operator can do.
type HostError struct {
	Kind, Host, Op, Message string
	// Action is what the operation did, with its object: "create VM win-md-0-x" ("" for a
	// failure before any operation, such as a missing credential).
	Action string
}

func (e *HostError) Error() string {
	w, ok := kindWords[e.Kind]
	if !ok {
		w = kindWords[wire.KindFailed]
	}
	msg := "Hyper-V host " + e.Host
	switch {
	case e.Action != "":
		msg = e.Action + " on " + msg
	case e.Op != "":
		msg = "operation " + e.Op + " on " + msg
	}
	msg += ": " + w.what
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if w.todo != "" {
		msg += "; " + w.todo
	}
	return msg + " (Hyper-V error " + cmp.Or(e.Kind, wire.KindFailed) + ")"
}

// kindWords say what each error kind means and what the operator can do about it.
var kindWords = map[string]struct{ what, todo string }{
	wire.KindNotFound: {"the VM or file does not exist on the host",
		"it was removed outside capwin; capwin looks at the VM again"},
	wire.KindInvalidSpec: {"the host cannot do what the spec asks",
		"fix the HyperVMachine or HyperVCluster spec, or prepare the host (parent disk, virtual switch)"},
	wire.KindDiskFull: {"the host's disk is full",
		"free space in the cluster's vmPath and diskPath folders on the host, or place the machine on another host"},
	wire.KindAccessDenied: {"the WinRM user may not do this on the host",
		"make the user of the host's credentials a Hyper-V Administrator with write access to the VM and disk folders"},
	wire.KindGuestUnavailable: {"the guest does not answer through its integration services",
		"wait for the guest to boot, or enable its shutdown integration service; powerOffMode trySoft cuts the power after its timeout"},
	wire.KindGuestFailed: {"PowerShell Direct into the guest failed",
		"check the user and password of spec.guestCredentialsRef and that the guest runs"},
	wire.KindNoGPU: {"the host has no free GPU of the kind spec.gpu asks for",
		"capwin tries again, for a machine without spec.host on a host whose status.hosts[].gpu shows a free one; free a GPU or add one to a host (docs/gpus.md, Hyper-V)"},
	wire.KindFailed: {"the operation failed", "capwin tries again; the host's message says why"},
	wire.KindUnreachable: {"the host did not answer",
		"check that the host runs and that its WinRM HTTPS listener is reachable from the manager; capwin tries again after a pause"},
	wire.KindAuth: {"the host refused the credentials",
		"fix the username and password in the host's credentials Secret"},
	wire.KindTLS: {"the host's WinRM certificate is not trusted",
		"set the host's caBundle to the CA that signed it, or fix the certificate's host name"},
	wire.KindCredentials: {"the host's credentials are missing",
		"create the Secret the HyperVCluster names, with the keys username and password"},
}

// doing puts an action in front of an error that does not say it yet: a host's errors
// (*HostError) name their action and host themselves.
func doing(action string, err error) error {
	if err == nil || KindOf(err) != "" {
		return err
	}
	return fmt.Errorf("%s: %w", action, err)
}

// LoginOutcome tells the login gate what the error says about the credential and the host: an
// unreachable host is tried again after a pause, a refused credential not before its Secret
// changes, an untrusted certificate means the credential was never sent, and an operation's own
// failure means it was accepted.
func (e *HostError) LoginOutcome() logingate.Outcome {
	switch e.Kind {
	case wire.KindAuth:
		return logingate.Refused
	case wire.KindUnreachable:
		return logingate.Unreachable
	case wire.KindTLS, wire.KindCredentials:
		return logingate.Untried
	}
	return logingate.Accepted
}

// KindOf returns the kind of a *HostError, "" for other errors.
func KindOf(err error) string {
	var e *HostError
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Connection reports whether the error is about reaching the host (down, TLS, credentials).
func Connection(err error) bool {
	switch KindOf(err) {
	case wire.KindUnreachable, wire.KindAuth, wire.KindTLS:
		return true
	}
	return false
}
