// Package ngts is a stand-in for vcert's connector of the same name.
package ngts

import (
	"github.com/Venafi/vcert/v5/pkg/certificate"
	"github.com/Venafi/vcert/v5/pkg/endpoint"
	"github.com/Venafi/vcert/v5/pkg/verror"
)

// Connector never works in the stand-in.
type Connector struct{}

func (c *Connector) GetType() endpoint.ConnectorType                  { return endpoint.ConnectorTypeUndefined }
func (c *Connector) Ping() error                                      { return verror.ErrUnavailable }
func (c *Connector) Authenticate(auth *endpoint.Authentication) error { return verror.ErrUnavailable }
func (c *Connector) ReadZoneConfiguration() (*endpoint.ZoneConfiguration, error) {
	return nil, verror.ErrUnavailable
}
func (c *Connector) RequestCertificate(req *certificate.Request) (string, error) {
	return "", verror.ErrUnavailable
}
func (c *Connector) RetrieveCertificate(req *certificate.Request) (*certificate.PEMCollection, error) {
	return nil, verror.ErrUnavailable
}
