// Package vcert is a build stand-in: Venafi issuers are not supported by
// capwin's e2e cert-manager build. NewClient always fails.
package vcert

import (
	"net/http"

	"github.com/Venafi/vcert/v5/pkg/endpoint"
	"github.com/Venafi/vcert/v5/pkg/verror"
)

// Config mirrors the fields of vcert's client configuration used by cert-manager.
type Config struct {
	ConnectorType   endpoint.ConnectorType
	BaseUrl         string
	Zone            string
	Credentials     *endpoint.Authentication
	ConnectionTrust string
	LogVerbose      bool
	Client          *http.Client
}

// NewClient always returns verror.ErrUnavailable.
func NewClient(cfg *Config, authenticate ...bool) (endpoint.Connector, error) {
	return nil, verror.ErrUnavailable
}
