// Package endpoint mirrors the connector types of vcert used by cert-manager.
package endpoint

import (
	"fmt"

	"github.com/Venafi/vcert/v5/pkg/certificate"
	"github.com/Venafi/vcert/v5/pkg/verror"
)

type ConnectorType int

const (
	ConnectorTypeUndefined ConnectorType = iota
	ConnectorTypeFake
	ConnectorTypeCloud
	ConnectorTypeTPP
	ConnectorTypeFirefly
	ConnectorTypeNGTS
)

func (t ConnectorType) String() string { return fmt.Sprintf("ConnectorType(%d)", int(t)) }

type Authentication struct {
	User         string
	Password     string
	APIKey       string
	RefreshToken string
	Scope        string
	ClientId     string
	ClientSecret string
	AccessToken  string
	TokenURL     string
}

// Connector is the subset of vcert's connector interface cert-manager uses.
type Connector interface {
	GetType() ConnectorType
	Ping() error
	ReadZoneConfiguration() (*ZoneConfiguration, error)
	RequestCertificate(req *certificate.Request) (requestID string, err error)
	RetrieveCertificate(req *certificate.Request) (*certificate.PEMCollection, error)
}

type ZoneConfiguration struct{}

func (z *ZoneConfiguration) UpdateCertificateRequest(req *certificate.Request) {}

func (z *ZoneConfiguration) ValidateCertificateRequest(req *certificate.Request) error {
	return verror.ErrUnavailable
}

type ErrCertificatePending struct {
	CertificateID string
	Status        string
}

func (e ErrCertificatePending) Error() string { return "certificate pending: " + e.Status }

type ErrRetrieveCertificateTimeout struct {
	CertificateID string
}

func (e ErrRetrieveCertificateTimeout) Error() string {
	return "timed out retrieving " + e.CertificateID
}
