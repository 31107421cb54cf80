// Package tpp is a stand-in for vcert's connector of the same name.
package tpp

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

type OauthVerifyTokenResponse struct {
	AccessIssuedOn string `json:"access_issued_on_ISO8601"`
	Identity       string `json:"identity"`
	Scope          string `json:"scope"`
}

func (c *Connector) GetRefreshToken(auth *endpoint.Authentication) (OauthGetRefreshTokenResponse, error) {
	return OauthGetRefreshTokenResponse{}, verror.ErrUnavailable
}

type OauthGetRefreshTokenResponse struct {
	Access_token  string `json:"access_token"`
	Expires       int    `json:"expires"`
	Identity      string `json:"identity"`
	Refresh_token string `json:"refresh_token"`
	Scope         string `json:"scope"`
	Token_type    string `json:"token_type"`
}

func (c *Connector) VerifyAccessToken(auth *endpoint.Authentication) (OauthVerifyTokenResponse, error) {
	return OauthVerifyTokenResponse{}, verror.ErrUnavailable
}

func (c *Connector) ResetCertificate(req *certificate.Request, restart bool) error {
	return verror.ErrUnavailable
}

// ErrCertNotFound is matched by cert-manager with errors.As.
type ErrCertNotFound struct{ error }
