package winebin

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/webhooks"
)

// A node's Windows paths (what bootstrap.ps1 and kubeadm use).
const (
	kubeletConfigPath = `C:\var\lib\kubelet\config.yaml`
	// apiServer is a closed loopback port: nothing in the stage may reach a network.
	apiServer = "127.0.0.1:1"
)

// config is one WindowsConfig of the matrix: a file of testdata (admitted as the webhook admits
// it) with edits.
type config struct {
	name  string
	file  string
	edits func(*bootstrapv1.WindowsConfigSpec)
}

// matrix covers every field that reaches the kubelet, kubeadm or containerd: the docs example
// an operator starts from, everything at once (testdata/everything.yaml), no taints, and each
// containerd config version.
var matrix = []config{
	{name: "docs example", file: "../../../docs/examples/windowsconfig.yaml"},
	{name: "everything", file: "testdata/everything.yaml"},
	{name: "no taints, calico, containerd 2.4", file: "../../../docs/examples/windowsconfig.yaml", edits: func(s *bootstrapv1.WindowsConfigSpec) {
		s.NodeRegistration.Taints = &[]bootstrapv1.Taint{}
		s.Containerd.Version = "2.4"
	}},
	{name: "containerd 2.2", file: "testdata/everything.yaml", edits: func(s *bootstrapv1.WindowsConfigSpec) { s.Containerd.Version = "2.2" }},
	{name: "containerd 1.7", file: "testdata/everything.yaml", edits: func(s *bootstrapv1.WindowsConfigSpec) {
		s.Containerd.Version = "1.7"
		s.HyperVIsolation = false
	}},
}

// spec reads and admits a matrix entry.
func (c cluster) spec(t testing.TB, cfg config) *bootstrapv1.WindowsConfigSpec {
	t.Helper()
	raw, err := os.ReadFile(cfg.file)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.ReplaceAll(string(raw), "CA_PEM", `"`+strings.ReplaceAll(c.caPEM, "\n", "\\n")+`"`))
	var spec *bootstrapv1.WindowsConfigSpec
	if strings.Contains(string(raw), "\nkind: WindowsConfigTemplate\n") {
		obj := &bootstrapv1.WindowsConfigTemplate{}
		err, spec = yaml.UnmarshalStrict(raw, obj), &obj.Spec.Template.Spec
	} else {
		obj := &bootstrapv1.WindowsConfig{}
		err, spec = yaml.UnmarshalStrict(raw, obj), &obj.Spec
	}
	if err != nil {
		t.Fatalf("%s: %v", cfg.file, err)
	}
	spec.Format = bootstrapv1.Format(userdata.FormatPowerShell)
	if cfg.edits != nil {
		cfg.edits(spec)
	}
	webhooks.DefaultSpec(spec)
	if errs := webhooks.ValidateSpec(spec, field.NewPath("spec")); len(errs) > 0 {
		t.Fatalf("%s is not admitted: %v", cfg.name, errs.ToAggregate())
	}
	return spec
}

// render is the data document a node of kubernetesVersion gets for spec, with the references
// resolved as the reconciler resolves them.
func (c cluster) render(t testing.TB, spec *bootstrapv1.WindowsConfigSpec, kubernetesVersion string) *userdata.Document {
	t.Helper()
	refs := windowsconfig.RefsWith(spec.Containerd.Registries,
		func(*bootstrapv1.CABundle) string { return c.caPEM },
		func(string) userdata.Access { return userdata.Access{Username: "capwin", Password: "p@ss:word"} })
	in := windowsconfig.BuildInput(spec, windowsconfig.JoinParams{Endpoint: apiServer, Token: "abcdef.0123456789abcdef",
		CAHash: c.hash, KubernetesVersion: kubernetesVersion, Files: make([]string, len(spec.Files)), Registries: refs})
	out, err := userdata.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	data, err := userdata.ExtractData(out)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := userdata.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// lay writes what the bootstrap writes on the node before kubeadm join runs: the files of the
// data document (capwin's kubelet configuration patch among them), containerd's config and
// registry hosts and the JoinConfiguration.
func (c cluster) lay(t testing.TB, p *Prefix, doc *userdata.Document) {
	t.Helper()
	write := func(path string, data []byte) {
		if !strings.HasPrefix(strings.ToUpper(path), `C:\`) {
			t.Fatalf("%s is not on C:", path)
		}
		host := p.Path(path)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range doc.Paths.Directories {
		if err := os.MkdirAll(p.Path(dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range append(append([]userdata.DocFile{}, doc.Files...), doc.Containerd.Hosts...) {
		data, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil {
			t.Fatal(err)
		}
		write(f.Path, data)
	}
	write(doc.Containerd.ConfigPath, []byte(doc.Containerd.Config))
	write(doc.Join.ConfigPath, []byte(doc.Join.Config))
}
