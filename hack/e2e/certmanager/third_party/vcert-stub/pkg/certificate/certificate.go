// Package certificate mirrors the request types of vcert used by cert-manager.
package certificate

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"time"

	"github.com/Venafi/vcert/v5/pkg/util"
	"github.com/Venafi/vcert/v5/pkg/verror"
)

type CustomFieldType int

const (
	CustomFieldPlain CustomFieldType = iota
	CustomFieldOrigin
)

type CustomField struct {
	Type  CustomFieldType
	Name  string
	Value string
}

type CSrOriginOption int

const (
	LocalGeneratedCSR CSrOriginOption = iota
	ServiceGeneratedCSR
	UserProvidedCSR
)

type ChainOption int

const (
	ChainOptionRootLast ChainOption = iota
	ChainOptionRootFirst
	ChainOptionIgnore
)

type Request struct {
	Subject          pkix.Name
	DNSNames         []string
	FriendlyName     string
	CsrOrigin        CSrOriginOption
	PickupID         string
	ChainOption      ChainOption
	CustomFields     []CustomField
	Timeout          time.Duration
	ValidityDuration *time.Duration
	IssuerHint       util.IssuerHint
}

// NewRequest returns an empty request for cert's subject.
func NewRequest(cert *x509.Certificate) *Request {
	r := &Request{}
	if cert != nil {
		r.Subject = cert.Subject
		r.DNSNames = cert.DNSNames
	}
	return r
}

// SetCSR always fails in the stand-in.
func (r *Request) SetCSR(csr []byte) error { return verror.ErrUnavailable }

type PEMCollection struct {
	Certificate string
	PrivateKey  string
	Chain       []string
}
