package webhooks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

type access = bootstrapv1.RegistryAccess

// TestRegistryAdmission: the CRD schema, its CEL rules and the webhook together refuse registry
// settings containerd would misread or ignore, each with the field's path, and warn about
// endpoints whose certificates are not verified.
func TestRegistryAdmission(t *testing.T) {
	apiServer(t)
	ca := testCAPEM(t)
	regs := func(r ...bootstrapv1.Registry) func(*bootstrapv1.WindowsConfigSpec) {
		return func(s *bootstrapv1.WindowsConfigSpec) { s.Containerd.Registries = r }
	}
	creds := func(name string) access { return access{Credentials: &bootstrapv1.SecretName{Name: name}} }
	mirror := func(url string, a access) []bootstrapv1.RegistryMirror {
		return []bootstrapv1.RegistryMirror{{URL: url, RegistryAccess: a}}
	}
	runAdmission(t, "r", []admissionCase{
		{"mirrors, CA, credentials", regs(
			bootstrapv1.Registry{Host: "registry.k8s.io", Mirrors: []bootstrapv1.RegistryMirror{
				{URL: "https://mirror.corp.example:5000", RegistryAccess: access{CA: &bootstrapv1.CABundle{Content: ca}}},
				{URL: "https://harbor.corp.example/v2/proxy", OverridePath: true, Capabilities: []bootstrapv1.MirrorCapability{"pull"}},
			}},
			bootstrapv1.Registry{Host: "registry.corp.example:5000", RegistryAccess: access{
				CA: &bootstrapv1.CABundle{ConfigMap: &bootstrapv1.ConfigMapKey{Name: "corp-ca", Key: "ca.pem"}}, Credentials: &bootstrapv1.SecretName{Name: "pull"}}},
			bootstrapv1.Registry{Host: "_default", Mirrors: mirror("https://proxy.corp.example", creds("proxy-pull"))},
		), "", ""},
		{"host with a scheme (CRD)", regs(bootstrapv1.Registry{Host: "https://docker.io"}), "spec.containerd.registries[0].host", "should match"},
		{"port out of range", regs(bootstrapv1.Registry{Host: "registry.corp:70000"}), "spec.containerd.registries[0].host", "between 1 and 65535"},
		{"host twice (CRD)", regs(bootstrapv1.Registry{Host: "docker.io"}, bootstrapv1.Registry{Host: "docker.io"}), "spec.containerd.registries[1]", "Duplicate value"},
		{"mirror twice (CEL)", regs(bootstrapv1.Registry{Host: "docker.io", Mirrors: []bootstrapv1.RegistryMirror{{URL: "https://m.corp"}, {URL: "https://m.corp"}}}),
			"spec.containerd.registries[0]", "each url may appear only once"},
		{"mirror URL with credentials (CRD)", regs(bootstrapv1.Registry{Host: "docker.io", Mirrors: mirror("https://u:p@m.corp", access{})}),
			"spec.containerd.registries[0].mirrors[0].url", "should match"},
		{"capability push (CRD)", regs(bootstrapv1.Registry{Host: "docker.io", Mirrors: []bootstrapv1.RegistryMirror{{URL: "https://m.corp", Capabilities: []bootstrapv1.MirrorCapability{"push"}}}}),
			"spec.containerd.registries[0].mirrors[0].capabilities[0]", "Unsupported value"},
		{"CA that is no PEM", regs(bootstrapv1.Registry{Host: "docker.io", RegistryAccess: access{CA: &bootstrapv1.CABundle{Content: "hello"}}}),
			"spec.containerd.registries[0].ca.content", "not PEM certificate data"},
		{"CA from two sources (CEL)", regs(bootstrapv1.Registry{Host: "docker.io", RegistryAccess: access{CA: &bootstrapv1.CABundle{Content: ca,
			Secret: &bootstrapv1.SecretKey{Name: "s", Key: "k"}}}}), "spec.containerd.registries[0].ca", "exactly one of content, secret and configMap"},
		{"CA beside insecureSkipVerify (CEL)", regs(bootstrapv1.Registry{Host: "docker.io", RegistryAccess: access{CA: &bootstrapv1.CABundle{Content: ca}, InsecureSkipVerify: true}}),
			"spec.containerd.registries[0]", "either ca or insecureSkipVerify"},
		{"credentials for _default (CEL)", regs(bootstrapv1.Registry{Host: "_default", RegistryAccess: creds("pull")}),
			"spec.containerd.registries[0]", "_default has no host of its own"},
		{"two credentials for one host", regs(
			bootstrapv1.Registry{Host: "docker.io", Mirrors: mirror("https://m.corp", creds("a"))},
			bootstrapv1.Registry{Host: "quay.io", Mirrors: mirror("https://m.corp/quay", creds("b"))},
		), "spec.containerd.registries[1].mirrors[0].credentials.name", "one set of credentials per host"},
	})
}

func TestInsecureRegistryWarns(t *testing.T) {
	g := apiServer(t)
	warnings.take()
	c := config("insecure", func(s *bootstrapv1.WindowsConfigSpec) {
		s.Containerd.Registries = []bootstrapv1.Registry{{Host: "docker.io", Mirrors: []bootstrapv1.RegistryMirror{
			{URL: "http://cache.corp", RegistryAccess: access{Credentials: &bootstrapv1.SecretName{Name: "pull"}}},
			{URL: "https://self-signed.corp", RegistryAccess: access{InsecureSkipVerify: true}},
		}}}
	})
	g.Expect(k8s.Create(context.Background(), c)).To(Succeed())
	g.Expect(warnings.take()).To(ConsistOf(
		ContainSubstring("spec.containerd.registries[0].mirrors[0].credentials: credentials go over plain http"),
		ContainSubstring("spec.containerd.registries[0].mirrors[1].insecureSkipVerify"),
	))
}

// testCAPEM is a fresh self-signed CA certificate.
func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
