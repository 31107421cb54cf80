package doctest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/test/integration/doctest"
)

// TestDocumentedObjectsAreAdmitted: every YAML block of the docs that is a whole object (it has
// apiVersion, kind and metadata.name) of Cluster API's or capwin's groups passes a server-side
// dry run on the management API server: its schema, CEL rules and webhooks.
func TestDocumentedObjectsAreAdmitted(t *testing.T) {
	dir := t.TempDir()
	n := 0
	for _, b := range allPages(t) {
		if b.Lang != "yaml" || b.Kind == doctest.Skip {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		first, _, _ := strings.Cut(b.Text, "\n---")
		if yaml.Unmarshal([]byte(first), &head) != nil || head.Kind == "" || head.Metadata.Name == "" ||
			!strings.Contains(head.APIVersion, "cluster.x-k8s.io") {
			continue
		}
		n++
		file := filepath.Join(dir, "object.yaml")
		if err := os.WriteFile(file, []byte(b.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", kubeconfig, "create", "--dry-run=server", "-n", "default", "-o", "name", "-f", file).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %s %s is refused: %s", b.Where(), head.Kind, head.Metadata.Name, out)
		}
	}
	if n == 0 {
		t.Error("no whole object found in the docs' YAML blocks")
	}
	t.Logf("%d objects admitted", n)
}
