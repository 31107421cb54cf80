package workload

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// pki is the workload cluster's single CA: it signs the apiserver's serving certificate and every
// client certificate, as kubeadm's cluster CA does, so a kubeconfig CAPI mints from CACert/CAKey
// is accepted by the apiserver.
type pki struct {
	ca     *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
	keyPEM []byte // PKCS#1 "RSA PRIVATE KEY", the encoding CAPI writes for its own CAs
	serial int64
}

func newPKI() (*pki, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &pki{
		ca: ca, caKey: key, serial: 1,
		caPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}, nil
}

// issue returns a PEM certificate and EC key signed by the CA.
func (p *pki) issue(subject pkix.Name, usage x509.ExtKeyUsage, dns []string, ips []net.IP) (crt, key []byte, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      subject,
		NotBefore:    p.ca.NotBefore,
		NotAfter:     p.ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, priv.Public(), p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// writeFiles fills the apiserver's cert dir. envtest generates its own serving CA only when
// apiserver.crt is absent, so writing it first makes envtest serve with our CA.
func (p *pki) writeFiles(dir string) error {
	crt, key, err := p.issue(pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)})
	if err != nil {
		return err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saDER, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(sa.Public())
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"apiserver.crt": crt,
		"apiserver.key": key,
		"ca.crt":        p.caPEM,
		"ca.key":        p.keyPEM,
		"sa.key":        pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saDER}),
		"sa.pub":        pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// caAuthn is an envtest.Authn that provisions users with client certificates from the cluster CA.
type caAuthn struct {
	pki *pki
	dir string
}

var _ envtest.Authn = (*caAuthn)(nil)

func (a *caAuthn) Configure(dir string, args *envtest.Arguments) error {
	a.dir = dir
	args.Set("client-ca-file", filepath.Join(dir, "ca.crt"))
	return nil
}

func (a *caAuthn) Start() error { return nil }

func (a *caAuthn) Stop() error { return nil }

func (a *caAuthn) AddUser(user envtest.User, base *rest.Config) (*rest.Config, error) {
	crt, key, err := a.pki.issue(pkix.Name{CommonName: user.Name, Organization: user.Groups},
		x509.ExtKeyUsageClientAuth, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("client certificate for %s: %w", user.Name, err)
	}
	cfg := rest.CopyConfig(base)
	cfg.CertData, cfg.KeyData = crt, key
	return cfg, nil
}
