package userdata

import (
	"bytes"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/yaml"
)

const kubeletPatch = `{
  "maxPods": 60,
  "systemReserved": {"cpu": "500m", "memory": "1Gi"},
  "evictionHard": {"memory.available": "600Mi"}
}`

// nodeFiles are the files the node writes before the join, by path, whoever writes them: the
// script (the document) or cloudbase-init (write_files).
func nodeFiles(t *testing.T, u *Unpacked, doc *Document) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, f := range doc.Files {
		files[f.Path] = decode(t, f.Content)
	}
	if u.CloudConfig != nil {
		var cc cloudConfigDoc
		if err := yaml.UnmarshalStrict(bytes.TrimPrefix(u.CloudConfig, []byte("#cloud-config\n")), &cc); err != nil {
			t.Fatal(err)
		}
		for _, f := range cc.WriteFiles {
			files[f.Path] = decode(t, f.Content)
		}
	}
	return files
}

func joinConfiguration(t *testing.T, doc *Document) *upstreamv1beta4.JoinConfiguration {
	t.Helper()
	cfg := &upstreamv1beta4.JoinConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(doc.Join.Config), cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestKubeletConfigurationIsAKubeadmPatchInBothFormats(t *testing.T) {
	for _, format := range []Format{FormatCloudConfig, FormatPowerShell} {
		t.Run(string(format), func(t *testing.T) {
			g := NewWithT(t)
			in := fullInput(format)
			userFiles := len(in.Files)
			in.KubeletConfiguration = []byte(kubeletPatch)
			u, doc := render(t, in)

			g.Expect(joinConfiguration(t, doc).Patches).To(Equal(&upstreamv1beta4.Patches{Directory: `C:\var\lib\capwin\kubeadm-patches`}))
			files := nodeFiles(t, u, doc)
			g.Expect(files).To(HaveKey(`C:\var\lib\capwin\kubeadm-patches\kubeletconfiguration+merge.json`))
			g.Expect(files[KubeletPatchPath]).To(MatchJSON(`{
  "maxPods": 60,
  "systemReserved": {"cpu": "500m", "memory": "1Gi"},
  "evictionHard": {"memory.available": "600Mi"},
  "containerRuntimeEndpoint": "npipe:////./pipe/containerd-containerd",
  "cgroupsPerQOS": false,
  "enforceNodeAllocatable": ["none"],
  "resolvConf": "",
  "enableSystemLogQuery": true,
  "registerWithTaints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}, {"key": "dedicated", "effect": "NoExecute"}]
}`))
			g.Expect(files[KubeletPatchPath]).NotTo(ContainSubstring("\n"), "compact JSON")
			g.Expect(in.Files).To(HaveLen(userFiles), "the caller's files are unchanged")
			if format == FormatCloudConfig {
				for _, f := range doc.Files {
					g.Expect(f.Path).NotTo(Equal(KubeletPatchPath), "cloudbase-init writes it, not the script")
				}
			}
		})
	}
}

// TestKubeletPatchWithoutUserFields: without fields of the user's, the patch holds capwin's own
// (what were the deprecated flags --container-runtime-endpoint, --cgroups-per-qos,
// --enforce-node-allocatable, --resolv-conf and --register-with-taints) and Node Log Query.
func TestKubeletPatchWithoutUserFields(t *testing.T) {
	for _, patch := range []string{"", "{}", " { } "} {
		g := NewWithT(t)
		in := minimalInput(FormatPowerShell)
		in.KubeletConfiguration = []byte(patch)
		in.Taints = nil
		u, doc := render(t, in)
		g.Expect(joinConfiguration(t, doc).Patches).To(Equal(&upstreamv1beta4.Patches{Directory: KubeadmPatchesDir}), "%q", patch)
		g.Expect(nodeFiles(t, u, doc)[KubeletPatchPath]).To(MatchJSON(`{"containerRuntimeEndpoint": "npipe:////./pipe/containerd-containerd",
  "cgroupsPerQOS": false, "enforceNodeAllocatable": ["none"], "resolvConf": "", "enableSystemLogQuery": true}`), "%q", patch)
	}
}

func TestKubeletConfigurationMustBeAnObject(t *testing.T) {
	for _, patch := range []string{"null", "[]", `"maxPods"`, "60", `{"maxPods": 60`} {
		in := minimalInput(FormatCloudConfig)
		in.KubeletConfiguration = []byte(patch)
		_, err := Render(in)
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("kubeletConfiguration is not a JSON object")), "%q", patch)
	}
}
