package windowsconfig

import (
	"os"
	"strings"
	"testing"
)

// testdata/ca.pin was computed with openssl, independently of this code:
//
//	openssl x509 -in ca.crt -pubkey -noout | openssl pkey -pubin -outform der | sha256sum
func TestCACertHashMatchesOpenSSL(t *testing.T) {
	crt, err := os.ReadFile("testdata/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	pin, err := os.ReadFile("testdata/ca.pin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := CACertHash(crt)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(pin)); got != want {
		t.Fatalf("hash = %s, want %s", got, want)
	}
}

func TestCACertHashRejectsGarbage(t *testing.T) {
	for _, in := range []string{"", "not pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		"-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"} {
		if _, err := CACertHash([]byte(in)); err == nil {
			t.Errorf("CACertHash(%q) succeeded, want an error", in)
		}
	}
}
