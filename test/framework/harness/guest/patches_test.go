package guest

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const clusterKubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
clusterDNS: [10.0.0.10]
evictionHard: {memory.available: 100Mi, nodefs.available: 10%}
maxPods: 110
`

// TestPatchKubeletConfig applies a folder of patches as kubeadm join does: in the order
// filepath.Walk visits them (the sub-folder's file last), by type, each YAML document a patch,
// other targets and extensions skipped.
func TestPatchKubeletConfig(t *testing.T) {
	s := &script{g: &Guest{fs: newFileSystem()}}
	dir := `C:\p`
	for name, content := range map[string]string{
		`kubeletconfiguration+merge.json`:       `{"maxPods": 60, "evictionHard": {"nodefs.available": null}}`,
		`kubeletconfiguration1.yaml`:            "evictionHard: {imagefs.available: 15%}\n---\nsystemReserved: {cpu: 500m}\n",
		`kubeletconfiguration2+json.json`:       `[{"op": "replace", "path": "/maxPods", "value": 50}]`,
		`etcd+merge.json`:                       `{"x": 1}`,
		`kubeletconfiguration.txt`:              `not a patch`,
		`sub\kubeletconfiguration9+merge.json`:  `{"maxPods": 1}`,
		`kubeletconfiguration3+merge.yaml.bak`:  `maxPods: 2`,
		`corednsdeployment+strategic.json`:      `{}`,
		`kubeletconfiguration4+strategic.yaml`:  "clusterDomain: cluster.local\n",
		`kube-apiserver0+merge.yaml`:            "spec: {}\n",
		`kubeletconfiguration5+strategic.json`:  `{"featureGates": {"A": true}}`,
		`kubeletconfiguration6+merge.json`:      `{"featureGates": {"B": false}}`,
		`kubeletconfiguration7+strategic.json`:  `{"clusterDNS": ["10.0.0.11"]}`,
		`kubeletconfiguration8+merge.json`:      `{}`,
		`other-target+merge.json`:               `{}`,
		`kubeletconfigurationx+strategic.yaml`:  "registerNode: true\n",
		`kubeletconfigurationy+merge.yaml`:      "serializeImagePulls: false\n",
		`kubeletconfigurationz+json.yaml`:       "- {op: add, path: /podsPerCore, value: 10}\n",
		`kubeletconfiguration_+strategic.json`:  `{"containerLogMaxFiles": 3}`,
		`kubeletconfiguration-a+strategic.json`: `{"containerLogMaxSize": "20Mi"}`,
	} {
		s.g.fs.write(dir+`\`+name, []byte(content))
	}
	var log []string
	out, err := s.patchKubeletConfig([]byte(clusterKubeletConfig), dir, func(l string) { log = append(log, l) })
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kubelet.config.k8s.io/v1beta1
clusterDNS:
- 10.0.0.11
clusterDomain: cluster.local
containerLogMaxFiles: 3
containerLogMaxSize: 20Mi
evictionHard:
  imagefs.available: 15%
  memory.available: 100Mi
featureGates:
  A: true
  B: false
kind: KubeletConfiguration
maxPods: 1
podsPerCore: 10
registerNode: true
serializeImagePulls: false
systemReserved:
  cpu: 500m
`
	if string(out) != want {
		t.Errorf("patched config:\n%s\nwant:\n%s", out, want)
	}
	if applied := strings.Count(strings.Join(log, "\n"), "Applied patch"); applied != 15 {
		t.Errorf("%d patches applied, want 15:\n%s", applied, strings.Join(log, "\n"))
	}
}

func TestPatchKubeletConfigErrors(t *testing.T) {
	s := &script{g: &Guest{fs: newFileSystem()}}
	if _, err := s.patchKubeletConfig([]byte(clusterKubeletConfig), `C:\none`, func(string) {}); err == nil || !strings.Contains(err.Error(), "no such directory") {
		t.Errorf("missing directory: %v", err)
	}
	s.g.fs.write(`C:\p\kubeletconfiguration+.json`, []byte(`{}`))
	if _, err := s.patchKubeletConfig([]byte(clusterKubeletConfig), `C:\p`, func(string) {}); err == nil || !strings.Contains(err.Error(), "patch type after '+'") {
		t.Errorf("missing patch type: %v", err)
	}
}
