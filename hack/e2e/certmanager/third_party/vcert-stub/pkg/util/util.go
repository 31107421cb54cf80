// Package util holds the vcert stand-in's request hints.
package util

// IssuerHint selects the issuer type in a certificate request.
type IssuerHint int

const (
	IssuerHintGeneric IssuerHint = iota
	IssuerHintMicrosoft
	IssuerHintDigicert
	IssuerHintEntrust
	IssuerHintAllIssuers
)
