package main

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
)

// FuzzDecodeAndAdmit: any file handed to render is rejected with a clear error, or it is a
// config admission accepts, which renders, and which written back as YAML decodes and is
// admitted to the same spec.
func FuzzDecodeAndAdmit(f *testing.F) {
	example, err := os.ReadFile("../../../docs/examples/windowsconfig.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	const head = "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: WindowsConfig\nmetadata:\n  name: w\nspec:\n  "
	for _, spec := range []string{
		"format: powershell\n", "timezone: Europe/Berlin\n", "cni:\n    plugin: flannel\n    vxlanVNI: 4097\n",
		"files:\n  - path: relative.txt\n    content: x\n", "nodeRegistration:\n    taints: []\n", "unknown: 1\n",
		"{}\n", "binaries:\n    source: Download\n", "cni: {}\n  nodeRegistration: {}\n  containerd: {}\n",
	} {
		f.Add([]byte(head + spec))
	}
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		obj, spec, err := decodeSpec(raw)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("decode error without a message")
			}
			return
		}
		undefaulted := spec.DeepCopy() // as stored without the defaulting webhook
		if errs := admit(obj, spec); len(errs) > 0 {
			for _, e := range errs {
				if e.Error() == "" {
					t.Fatalf("admission error without a message: %#v", e)
				}
			}
			return
		}
		params := windowsconfig.JoinParams{Endpoint: "10.0.0.10:6443",
			Token: "abcdef.0123456789abcdef", CAHash: "sha256:" + strings.Repeat("0", 64), KubernetesVersion: "v1.36.3",
			Files: make([]string, len(spec.Files))}
		in := windowsconfig.BuildInput(spec, params)
		// The reconciler defaults what it reads: the config undefaulted builds the same input.
		if again := windowsconfig.BuildInput(undefaulted, params); !equality.Semantic.DeepEqual(in, again) {
			t.Fatalf("undefaulted, the config builds %+v, not %+v", again, in)
		}
		if _, err := userdata.Render(in); err != nil {
			t.Fatalf("admitted config does not render: %v", err)
		}
		again, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		obj2, spec2, err := decodeSpec(again)
		if err != nil {
			t.Fatalf("written back, it does not decode: %v\n%s", err, again)
		}
		if errs := admit(obj2, spec2); len(errs) > 0 || !equality.Semantic.DeepEqual(spec, spec2) {
			t.Fatalf("written back, it is admitted as %+v (%v), not %+v", spec2, errs, spec)
		}
	})
}
