package wsman

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"net"
	"testing"
)

// TestGivenAddressAndCertificate: a server listens where Options.Addr says, on all addresses
// too, serves Options.Certificate, and gives that certificate as its CA when it is self-signed.
func TestGivenAddressAndCertificate(t *testing.T) {
	first := startServer(t, Options{})
	cert := first.certs.server // a CA-signed certificate for 127.0.0.1, with its chain
	s := startServer(t, Options{Addr: net.JoinHostPort("", "0"), Certificate: &cert})
	if s.Host != "127.0.0.1" || s.Port == 0 || s.Port == first.Port {
		t.Fatalf("listening on all addresses: host %s, port %d", s.Host, s.Port)
	}
	ca, _ := pem.Decode(s.CACertPEM())
	if ca == nil || !bytes.Equal(ca.Bytes, cert.Certificate[len(cert.Certificate)-1]) || !bytes.Equal(s.CACertPEM(), first.CACertPEM()) {
		t.Fatal("CACertPEM is not the last certificate of the given chain")
	}
	if s.CertificateThumbprint() != first.CertificateThumbprint() {
		t.Fatal("the thumbprint is not the given certificate's")
	}
	if out := mustRun(t, client(t, s, ntlm), "hostname", nil); string(out.stdout) != "ran hostname" {
		t.Fatalf("stdout %q", out.stdout)
	}
	if _, err := Start(Options{Handler: echo, Certificate: &tls.Certificate{}}); err == nil {
		t.Fatal("a certificate without key was accepted")
	}
}
