package management

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/internal/test/envtest"
)

// webhookConfigs writes the webhook configurations of CAPI core, capwin bootstrap and capwin
// infrastructure into a new directory, each renamed with its production kustomize namePrefix so
// that envtest installs all three instead of overwriting one with the next.
func webhookConfigs() (dir string, err error) {
	capi, err := envtest.ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return "", err
	}
	root := envtest.RepoRoot()
	sources := []struct{ prefix, file string }{
		{"capi-", filepath.Join(capi, "core", "config", "webhook", "manifests.yaml")},
		{"capwin-bootstrap-", filepath.Join(root, "bootstrap", "config", "webhook", "manifests.yaml")},
		{"capwin-infrastructure-", filepath.Join(root, "infrastructure", "config", "webhook", "manifests.yaml")},
	}
	if dir, err = os.MkdirTemp("", "capwin-management-webhooks-"); err != nil {
		return "", err
	}
	for _, s := range sources {
		out, err := renamed(s.file, s.prefix)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, s.prefix+"manifests.yaml"), out, 0o600)
		}
		if err != nil {
			return "", errors.Join(err, os.RemoveAll(dir))
		}
	}
	return dir, nil
}

// renamed returns the webhook configurations of a manifest file with prefix added to their names.
func renamed(file, prefix string) ([]byte, error) {
	in, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(in), 4096)
	for n := 0; ; {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			if n == 0 {
				return nil, fmt.Errorf("%s: no webhook configuration", file)
			}
			return out.Bytes(), nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if !strings.HasSuffix(u.GetKind(), "WebhookConfiguration") {
			continue
		}
		u.SetName(prefix + u.GetName())
		doc, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(doc)
		n++
	}
}
