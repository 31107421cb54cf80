package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// clusterFile is a generated cluster's shape: a leading comment, other kinds, then the
// WindowsConfigTemplates.
const clusterFile = `# A comment before the first document, as clusterctl's templates have.
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: win1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: win1-calico
data:
  a: b
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: WindowsConfigTemplate
metadata:
  name: win1-windows-ltsc2022
spec:
  template:
    spec:
      timezone: UTC
`

const secondTemplate = `---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: WindowsConfigTemplate
metadata:
  name: win1-windows-ltsc2025
spec:
  template:
    spec:
      timezone: W. Europe Standard Time
`

// TestRenderMultiDocument: render finds the WindowsConfigTemplate in a whole generated cluster
// file and says which it used; with several it asks for --name.
func TestRenderMultiDocument(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write("one.yaml", clusterFile)
	two := write("two.yaml", clusterFile+secondTemplate)
	none := write("none.yaml", "kind: Cluster\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n")
	args := func(file string, more ...string) []string {
		return append([]string{"-f", file, "--api-server", "10.0.0.10:6443", "--ca-file", caFile}, more...)
	}
	render := func(a []string) (string, string, error) {
		var out, said bytes.Buffer
		old := notices
		notices = &said
		defer func() { notices = old }()
		err := run(a, &out)
		return out.String(), said.String(), err
	}

	t.Run("the only template", func(t *testing.T) {
		g := NewWithT(t)
		out, said, err := render(args(one))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(said).To(Equal("render: using WindowsConfigTemplate win1-windows-ltsc2022 of " + one + "\n"))
		alone, _, err := render(args(write("alone.yaml", clusterFile[strings.LastIndex(clusterFile, "---"):])))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(Equal(alone))
	})
	t.Run("several templates need --name", func(t *testing.T) {
		g := NewWithT(t)
		_, _, err := render(args(two))
		g.Expect(err).To(MatchError(ContainSubstring("holds 2 WindowsConfigs and WindowsConfigTemplates (WindowsConfigTemplate win1-windows-ltsc2022, WindowsConfigTemplate win1-windows-ltsc2025): choose one with --name")))
	})
	t.Run("--name picks one", func(t *testing.T) {
		g := NewWithT(t)
		out, said, err := render(args(two, "--name", "win1-windows-ltsc2025"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(said).To(ContainSubstring("using WindowsConfigTemplate win1-windows-ltsc2025"))
		alone, _, err := render(args(write("alone2.yaml", secondTemplate)))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(Equal(alone))
	})
	t.Run("--name not there", func(t *testing.T) {
		g := NewWithT(t)
		_, _, err := render(args(two, "--name", "win9"))
		g.Expect(err).To(MatchError(ContainSubstring(`holds no WindowsConfig or WindowsConfigTemplate called "win9"`)))
	})
	t.Run("no template", func(t *testing.T) {
		g := NewWithT(t)
		_, _, err := render(args(none))
		g.Expect(err).To(MatchError(ContainSubstring("holds no WindowsConfig or WindowsConfigTemplate (kinds: Cluster, ConfigMap)")))
	})
	t.Run("a single file says nothing", func(t *testing.T) {
		g := NewWithT(t)
		_, said, err := render(args("../../../docs/examples/windowsconfig.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(said).To(BeEmpty())
	})
}
