package main

import (
	"bytes"
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// TestRenderPlaceholders: what comes from Secrets and ConfigMaps shows where it goes on the node,
// as a placeholder that names its source: registry credentials in config.toml, CA files in the
// registries' folders, files' contentFrom.
func TestRenderPlaceholders(t *testing.T) {
	g := NewWithT(t)
	path := writeConfig(t, t.TempDir(), "registries.yaml", `format: powershell
  files:
  - path: C:\etc\app\key.txt
    contentFrom: {secret: {name: app-key, key: key.txt}}
  containerd:
    registries:
    - host: registry.k8s.io
      mirrors:
      - url: https://mirror.corp.example
        ca: {configMap: {name: corp-ca, key: ca.pem}}
        credentials: {name: corp-pull}
    - host: registry.corp.example:5000
      ca: {secret: {name: corp-ca-secret, key: ca.crt}}
      credentials: {name: other-pull}
`)
	var out bytes.Buffer
	g.Expect(run([]string{"-f", path, "--api-server", "10.0.0.10:6443", "--ca-file", caFile}, &out)).To(Succeed())
	u, err := userdata.Unpack(out.Bytes())
	g.Expect(err).NotTo(HaveOccurred())
	doc, err := userdata.DecodeDocument(u.Data)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(doc.Containerd.Config).To(ContainSubstring(`[plugins.'io.containerd.grpc.v1.cri'.registry.configs.'mirror.corp.example'.auth]
username = '<username of Secret corp-pull>'
password = '<password of Secret corp-pull>'`))
	g.Expect(doc.Containerd.Config).To(ContainSubstring(`[plugins.'io.containerd.grpc.v1.cri'.registry.configs.'registry.corp.example:5000'.auth]
username = '<username of Secret other-pull>'`))
	files := map[string]string{}
	for _, f := range append(doc.Files, doc.Containerd.Hosts...) {
		b, err := base64.StdEncoding.DecodeString(f.Content)
		g.Expect(err).NotTo(HaveOccurred())
		files[f.Path] = string(b)
	}
	g.Expect(files).To(HaveKeyWithValue(userdata.CertsDir+`\registry.k8s.io\mirror-0.crt`, "<content of ConfigMap corp-ca key ca.pem>\n"))
	g.Expect(files).To(HaveKeyWithValue(userdata.CertsDir+`\registry.corp.example_5000_\ca.crt`, "<content of Secret corp-ca-secret key ca.crt>\n"))
	g.Expect(files).To(HaveKeyWithValue(`C:\etc\app\key.txt`, "<content of Secret app-key key key.txt>"))
}
