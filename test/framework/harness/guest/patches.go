package guest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// kubeadm's patch file names: "target[suffix][+patchtype].extension" (cmd/kubeadm/app/util/patches).
var (
	patchExtension = regexp.MustCompile(`\.(json|yaml)$`)
	patchFileName  = regexp.MustCompile(`^(etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubeletconfiguration|corednsdeployment)([^.+\n]*)?(\+)?(strategic|merge|json)?`)
)

const kubeletPatchTarget = "kubeletconfiguration"

// patchKubeletConfig is what kubeadm join does with JoinConfiguration.patches before it writes
// the kubelet's config.yaml: each file of dir for the kubeletconfiguration target, in name order,
// patches the cluster's kubelet-config (strategic, the default, merge or json; each YAML
// document of a file is one patch). Files of sub-folders count too (kubeadm walks the folder);
// files of other targets or extensions are skipped, as a worker's join does; a folder without
// files is an error, as kubeadm's missing one is.
func (s *script) patchKubeletConfig(config []byte, dir string, out func(string)) ([]byte, error) {
	files := s.g.fs.walk(dir)
	if len(files) == 0 {
		return nil, fmt.Errorf("could not list patch files for path %q: no such directory", dir)
	}
	data, err := yaml.YAMLToJSON(config)
	if err != nil {
		return nil, fmt.Errorf("kubelet-config is not YAML: %w", err)
	}
	for _, path := range files {
		name := path[strings.LastIndex(path, `\`)+1:]
		sub := patchFileName.FindStringSubmatch(name)
		if !patchExtension.MatchString(name) || sub == nil {
			out(fmt.Sprintf("[patches] Ignoring file %q: unknown target or extension", name))
			continue
		}
		if sub[3] != "" && sub[4] == "" {
			return nil, fmt.Errorf("patch file %q: unknown or missing patch type after '+', must be one of [json merge strategic]", name)
		}
		if sub[1] != kubeletPatchTarget {
			continue
		}
		content, _ := s.g.fs.read(path)
		applied := func() {
			out(fmt.Sprintf("[patches] Applied patch of type %q to target %q", patchMediaType(sub[4]), kubeletPatchTarget))
		}
		if data, err = applyPatches(data, content, sub[4], applied); err != nil {
			return nil, fmt.Errorf("could not apply the patch %q to target %q: %w", name, kubeletPatchTarget, err)
		}
	}
	return yaml.JSONToYAML(data)
}

// applyPatches applies each YAML document of content to data (JSON), calling applied after each.
func applyPatches(data, content []byte, patchType string, applied func()) ([]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if doc = bytes.TrimSpace(doc); len(doc) == 0 {
			continue
		}
		patch, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		switch patchType {
		case "json":
			var p jsonpatch.Patch
			if p, err = jsonpatch.DecodePatch(patch); err == nil {
				data, err = p.Apply(data)
			}
		case "merge":
			data, err = jsonpatch.MergePatch(data, patch)
		default:
			data, err = strategicpatch.StrategicMergePatch(data, patch, kubeletv1beta1.KubeletConfiguration{})
		}
		if err != nil {
			return nil, err
		}
		applied()
	}
}

func patchMediaType(patchType string) string {
	switch patchType {
	case "json":
		return "application/json-patch+json"
	case "merge":
		return "application/merge-patch+json"
	}
	return "application/strategic-merge-patch+json"
}
