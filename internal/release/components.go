package release

import (
	"os"
	"path/filepath"
)

// Components are the provider components files by name, with clusterctl's ${VAR:=default}
// placeholders for the settings operators choose at clusterctl init.
var Components = map[string]string{
	"bootstrap-components.yaml":      "bootstrap/config/default",
	"infrastructure-components.yaml": "infrastructure/config/default",
}

// Examples are optional manifests an operator applies beside the components (Prometheus
// Operator scrape configuration for each manager); clusterctl never reads them.
var Examples = map[string]string{
	"bootstrap-prometheus-example.yaml":      "bootstrap/config/prometheus",
	"infrastructure-prometheus-example.yaml": "infrastructure/config/prometheus",
}

// Write writes a release into dir: both components files, metadata.yaml, every cluster
// template and ClusterClass - the files of one clusterctl provider repository version - with
// the checked-in image names (DefaultRegistry, DefaultVersion).
func Write(root, dir string) error { return WriteStamped(root, dir, Stamp{}) }

// WriteStamped writes a release into dir as Write does, with capwin's images in s.Registry
// tagged s.Version and the release series of s.Version in metadata.yaml.
func WriteStamped(root, dir string, s Stamp) error {
	if err := s.validate(); err != nil {
		return err
	}
	files, err := Templates(root)
	if err != nil {
		return err
	}
	for name, src := range allManifests() {
		objs, err := build(root, src)
		if err != nil {
			return err
		}
		if files[name], err = encode(objs); err != nil {
			return err
		}
	}
	for name, body := range files {
		files[name] = s.images(body)
	}
	meta, err := os.ReadFile(filepath.Join(root, "metadata.yaml")) //nolint:gosec // G304: a file of the checkout the release is made from
	if err != nil {
		return err
	}
	if files["metadata.yaml"], err = s.metadataFile(meta); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func allManifests() map[string]string {
	all := map[string]string{}
	for _, m := range []map[string]string{Components, Examples} {
		for name, src := range m {
			all[name] = src
		}
	}
	return all
}
