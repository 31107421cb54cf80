// Command capicomponents writes Cluster API's clusterctl repository files for the kind e2e
// (core, kubeadm bootstrap and kubeadm control plane components and metadata.yaml) from the
// sigs.k8s.io/cluster-api module's own config/ folders with kustomize, as Cluster API's
// `make release-manifests` does, with the manager images scripts/e2e-images.sh built here; and,
// given the sigs.k8s.io/cluster-api-operator module, the Cluster API Operator's manifest from its
// config/default the same way.
//
//	go run ./hack/e2e/capicomponents -module-dir DIR -version v1.14.2 -image-prefix e2e.capwin.local/ -out OUT \
//	  [-operator-module-dir DIR -operator-version v0.29.0]
//
// OUT gets cluster-api/VERSION/core-components.yaml, bootstrap-kubeadm/VERSION/
// bootstrap-components.yaml and control-plane-kubeadm/VERSION/control-plane-components.yaml,
// each folder with metadata.yaml, and cluster-api-operator/VERSION/operator-components.yaml.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/capwin/capwin/internal/release"
)

// component is one provider of the Cluster API module.
type component struct {
	folder, file, config string
}

var capiComponents = []component{
	{"cluster-api", "core-components.yaml", "core/config/default"},
	{"bootstrap-kubeadm", "bootstrap-components.yaml", "bootstrap/kubeadm/config/default"},
	{"control-plane-kubeadm", "control-plane-components.yaml", "controlplane/kubeadm/config/default"},
}

// operator is the Cluster API Operator's manifest: not a clusterctl provider, so no metadata.yaml.
var operator = component{"cluster-api-operator", "operator-components.yaml", "config/default"}

// stagingImage is the image reference Cluster API's (and the operator's) config carries before
// its release sets one.
var stagingImage = regexp.MustCompile(`gcr\.io/k8s-staging-(?:cluster-api|capi-operator)/([a-z-]+):(?:main|dev)`)

func main() {
	moduleDir := flag.String("module-dir", "", "the sigs.k8s.io/cluster-api module (go mod download -json)")
	version := flag.String("version", "", "the Cluster API version, the images' tag")
	prefix := flag.String("image-prefix", "", "registry prefix of the images, e.g. e2e.capwin.local/")
	out := flag.String("out", "", "output folder")
	operatorDir := flag.String("operator-module-dir", "", "the sigs.k8s.io/cluster-api-operator module (optional)")
	operatorVersion := flag.String("operator-version", "", "the Cluster API Operator version, its image's tag")
	flag.Parse()
	if *moduleDir == "" || *version == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "capicomponents: -module-dir, -version and -out are required")
		os.Exit(2)
	}
	if (*operatorDir == "") != (*operatorVersion == "") {
		fmt.Fprintln(os.Stderr, "capicomponents: -operator-module-dir and -operator-version go together")
		os.Exit(2)
	}
	err := writeCAPI(*moduleDir, *version, *prefix, *out)
	if err == nil && *operatorDir != "" {
		_, err = write(*operatorDir, operator, *operatorVersion, *prefix, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "capicomponents:", err)
		os.Exit(1)
	}
}

func writeCAPI(moduleDir, version, prefix, out string) error {
	metadata, err := os.ReadFile(filepath.Join(moduleDir, "metadata.yaml")) //nolint:gosec // G304: the Cluster API module named by this tool's flag
	if err != nil {
		return err
	}
	for _, c := range capiComponents {
		dir, err := write(moduleDir, c, version, prefix, out)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "metadata.yaml"), metadata, 0o644); err != nil { //nolint:gosec // G703: into the output folder named by this tool's flag
			return err
		}
	}
	return nil
}

// write kustomizes c's config of the module in moduleDir into OUT/FOLDER/VERSION/FILE, with the
// images built here, and returns that folder.
func write(moduleDir string, c component, version, prefix, out string) (string, error) {
	body, err := release.Kustomize(filepath.Join(moduleDir, c.config))
	if err != nil {
		return "", err
	}
	body, err = localImages(body, prefix, version)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.file, err)
	}
	dir := filepath.Join(out, c.folder, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, c.file), body, 0o644)
}

// localImages points the manager at the image built here and never pulls it, as a release with
// PULL_POLICY=IfNotPresent does.
func localImages(body []byte, prefix, version string) ([]byte, error) {
	if !stagingImage.Match(body) {
		return nil, fmt.Errorf("no %s image reference to replace", stagingImage)
	}
	body = stagingImage.ReplaceAll(body, []byte(prefix+"${1}:"+version))
	return bytes.ReplaceAll(body, []byte("imagePullPolicy: Always"), []byte("imagePullPolicy: IfNotPresent")), nil
}
