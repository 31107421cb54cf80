package winebin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
)

// cluster is the CA of a made-up cluster and of the registries' certificates.
type cluster struct {
	caPEM string
	hash  string
}

func newCluster(t testing.TB) cluster {
	t.Helper()
	certPEM, _ := certificate(t, &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
	c := cluster{caPEM: certPEM}
	var err error
	if c.hash, err = windowsconfig.CACertHash([]byte(c.caPEM)); err != nil {
		t.Fatal(err)
	}
	return c
}

// certificate is a self-signed certificate of tmpl, valid from an hour ago for a day, and its key.
func certificate(t testing.TB, tmpl *x509.Certificate) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

// clientCert is a self-signed client certificate and key for name: the kubelet checks only that
// the certificate in its store is present and current before it skips the TLS bootstrap.
func (c cluster) clientCert(t testing.TB, name string) (certPEM, keyPEM string) {
	t.Helper()
	return certificate(t, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name, Organization: []string{"system:nodes"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
}

// kubeletClientCert is where kubeadm join leaves the kubelet's client certificate and key (the
// kubelet's certificate store), which kubelet.conf names.
const kubeletClientCert = `C:\var\lib\kubelet\pki\kubelet-client-current.pem`

// kubeconfig is the kubelet.conf kubeadm join writes for the made-up cluster at apiServer.
func kubeconfig(caPEM string) string {
	b := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: cluster
  cluster: {server: "https://%s", certificate-authority-data: %s}
users:
- name: node
  user: {client-certificate: '%[3]s', client-key: '%[3]s'}
contexts:
- name: node
  context: {cluster: cluster, user: node}
current-context: node
`, apiServer, b(caPEM), kubeletClientCert)
}
