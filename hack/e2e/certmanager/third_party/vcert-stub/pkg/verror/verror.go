// Package verror holds the errors of the vcert stand-in.
package verror

import "errors"

// ErrUnavailable is returned by every operation of the stand-in.
var ErrUnavailable = errors.New("the Venafi issuer is not available in this cert-manager build (capwin e2e: github.com/Venafi/vcert/v5 is replaced by a stub)")

// ServerUnavailableError is matched by cert-manager with errors.Is.
var ServerUnavailableError = errors.New("venafi server unavailable")
