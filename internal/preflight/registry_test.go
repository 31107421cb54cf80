package preflight

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capwin/capwin/internal/preflight/registrytest"
)

// TestRegistryReadsWindowsBuilds reads images from in-process registries under a private CA:
// single images, indexes that describe their platforms and indexes that do not (each image's
// config is read), a Linux image, and a private registry opened only by a pull Secret.
func TestRegistryReadsWindowsBuilds(t *testing.T) {
	g := NewWithT(t)
	regs := registrytest.Start(t)
	pub, priv := regs.Public, regs.Private
	ltsc2022 := regs.Push(t, pub, "win/iis:ltsc2022", false, registrytest.LTSC2022)
	multi := regs.Push(t, pub, "win/iis:multi", true, registrytest.LTSC2022, registrytest.LTSC2025, registrytest.Linux)
	bare := regs.Push(t, pub, "win/iis:bare-index", false, registrytest.LTSC2022, registrytest.LTSC2025)
	linux := regs.Push(t, pub, "lin/nginx:1", false, registrytest.Linux)
	private := regs.Push(t, priv, "corp/app:ltsc2025", false, registrytest.LTSC2025)

	reg := &Registry{Transport: caTransport(t, regs.CAFile)}
	ctx := t.Context()
	for _, c := range []struct {
		ref  string
		want Image
	}{
		{ltsc2022, Image{Windows: []string{"10.0.20348.2700"}}},
		{multi, Image{Windows: []string{"10.0.20348.2700", "10.0.26100.1742"}, Others: []string{"linux/amd64"}}},
		{bare, Image{Windows: []string{"10.0.20348.2700", "10.0.26100.1742"}}},
		{linux, Image{Others: []string{"linux/amd64"}}},
	} {
		got, err := reg.Read(ctx, c.ref, nil)
		g.Expect(err).NotTo(HaveOccurred(), c.ref)
		g.Expect(got).To(Equal(c.want), c.ref)
	}

	// The private registry: refused without credentials, read with a dockerconfigjson pull Secret.
	_, err := reg.Read(ctx, private, nil)
	g.Expect(err).To(MatchError(ContainSubstring("401 Unauthorized")))
	auth := base64.StdEncoding.EncodeToString([]byte(regs.User + ":" + regs.Password))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{"https://" + registrytest.Host(priv): map[string]string{"auth": auth}}})
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: cfg}}
	got, err := reg.Read(ctx, private, []corev1.Secret{secret})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Windows).To(Equal([]string{"10.0.26100.1742"}))

	// Without the private CA the TLS handshake fails, and says so.
	_, err = (&Registry{}).Read(ctx, ltsc2022, nil)
	g.Expect(err).To(MatchError(ContainSubstring("certificate")))
}

func caTransport(t *testing.T, caFile string) http.RoundTripper {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr
}
