package gmsa

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the webhook's Secret, as the upstream template names them.
const (
	certKey = "tls_certificate"
	keyKey  = "tls_private_key"
)

const (
	certLifetime = 10 * 365 * 24 * time.Hour
	renewBefore  = 30 * 24 * time.Hour // a certificate that expires sooner is replaced
)

// keyPair is a PEM certificate and its PEM private key.
type keyPair struct{ cert, key []byte }

// serviceHost is the name the API server calls the webhook by.
func serviceHost() string { return Name + "." + Namespace + ".svc" }

// servingCertificate returns the certificate in the webhook's Secret when it is still good for
// the Service (a second run keeps it, so the caBundle does not change under running pods), and
// a new one otherwise.
func servingCertificate(ctx context.Context, c client.Reader, o *Options) (keyPair, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, s)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return keyPair{}, err
	default:
		p := keyPair{cert: s.Data[certKey], key: s.Data[keyKey]}
		why := p.check(o.Now())
		if why == nil {
			o.logf("keeping the serving certificate of Secret %s/%s", Namespace, Name)
			return p, nil
		}
		o.logf("replacing the serving certificate of Secret %s/%s: %v", Namespace, Name, why)
	}
	return newCertificate(o.Now())
}

// check says why p cannot serve the webhook at now, or nil.
func (p keyPair) check(now time.Time) error {
	pair, err := tls.X509KeyPair(p.cert, p.key)
	if err != nil {
		return err
	}
	leaf := pair.Leaf // X509KeyPair parses the leaf (Go 1.23 and later)
	if !slices.Contains(leaf.DNSNames, serviceHost()) {
		return fmt.Errorf("it does not name %s", serviceHost())
	}
	if now.Add(renewBefore).After(leaf.NotAfter) {
		return fmt.Errorf("it expires at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if leaf.CheckSignatureFrom(leaf) != nil {
		return errors.New("it is not self-signed, so it cannot be its own caBundle")
	}
	return nil
}

// newCertificate makes a self-signed ECDSA P-256 certificate for the webhook's Service. It is a
// CA too, so that it can be the webhooks' caBundle.
func newCertificate(now time.Time) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return keyPair{}, err
	}
	host := serviceHost()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: host},
		DNSNames:              []string{host, host + ".cluster.local"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return keyPair{}, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}, nil
}
