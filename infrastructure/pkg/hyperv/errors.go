package hyperv

import (
	"errors"
	"fmt"

	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// Error kinds. The first ones come from the operation scripts (Stop-Capwin, or a classified
// PowerShell error); the last three from the connection.
const (
	KindNotFound         = "NotFound"
	KindInvalidSpec      = "InvalidSpec"
	KindDiskFull         = "DiskFull"
	KindAccessDenied     = "AccessDenied"
	KindGuestUnavailable = "GuestUnavailable"
	KindGuestFailed      = "GuestFailed"
	KindFailed           = "Failed"
	KindUnreachable      = "Unreachable"
	KindAuth             = "AuthFailed"
	KindTLS              = "TLSVerificationFailed"
	// KindCredentials: the host's credentials Secret is missing or incomplete.
	KindCredentials = "CredentialsNotFound"
)

// HostError is a failed host operation.
type HostError struct {
	Kind, Host, Op, Message string
}

func (e *HostError) Error() string {
	if e.Op != "" {
		return fmt.Sprintf("host %s: %s: %s", e.Host, e.Op, e.Message)
	}
	return fmt.Sprintf("host %s: %s", e.Host, e.Message)
}

// LoginOutcome tells the login gate what the error says about the credential and the host: an
// unreachable host is tried again after a pause, a refused credential not before its Secret
// changes, an untrusted certificate means the credential was never sent, and an operation's own
// failure means it was accepted.
func (e *HostError) LoginOutcome() logingate.Outcome {
	switch e.Kind {
	case KindAuth:
		return logingate.Refused
	case KindUnreachable:
		return logingate.Unreachable
	case KindTLS, KindCredentials:
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
	case KindUnreachable, KindAuth, KindTLS:
		return true
	}
	return false
}
