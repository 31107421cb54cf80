package hyperv

import (
	"errors"
	"fmt"
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

// Refused reports a credential the host refused (logingate.Refusal).
func (e *HostError) Refused() bool { return e.Kind == KindAuth }

// Unreachable reports a host that could not be reached, did not answer in time or could not be
// trusted (logingate.Unreachable): it is tried again after a pause.
func (e *HostError) Unreachable() bool { return e.Kind == KindUnreachable || e.Kind == KindTLS }

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
