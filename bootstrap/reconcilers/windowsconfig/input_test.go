package windowsconfig

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/webhooks"
)

func TestBuildInput(t *testing.T) {
	params := JoinParams{Endpoint: "10.0.0.1:6443", Token: "abcdef.0123456789abcdef", CAHash: "sha256:00", KubernetesVersion: "v1.36.3"}
	cases := []struct {
		name  string
		spec  bootstrapv1.WindowsConfigSpec
		p     JoinParams
		check func(t *testing.T, in userdata.Input)
	}{
		{"defaults when CRD defaulting did not run", bootstrapv1.WindowsConfigSpec{}, params, func(t *testing.T, in userdata.Input) {
			want := userdata.Input{
				Format: userdata.FormatCloudConfig, KubernetesVersion: "v1.36.3",
				Join: userdata.Join{APIServerEndpoint: "10.0.0.1:6443", Token: "abcdef.0123456789abcdef",
					CACertHashes: []string{"sha256:00"}, CRISocket: bootstrapv1.DefaultCRISocket},
				Labels:     map[string]string{KubernetesVersionLabel: "v1.36.3"},
				Taints:     defaultTaints,
				PauseImage: webhooks.DefaultPauseImage, CNI: userdata.CNI{Plugin: "calico", VXLANVNI: 4096, VXLANPort: 4789},
				Binaries: userdata.Binaries{Directory: `C:\k`}, DefenderExclusions: true, ContainerdConfigVersion: 2,
			}
			if !reflect.DeepEqual(in, want) {
				t.Fatalf("got  %+v\nwant %+v", in, want)
			}
		}},
		{"the node is labelled with its Kubernetes version, next to the spec's labels", bootstrapv1.WindowsConfigSpec{
			NodeRegistration: bootstrapv1.NodeRegistration{Labels: map[string]string{"a": "b"}}},
			JoinParams{KubernetesVersion: "v1.36.3+build.1"}, func(t *testing.T, in userdata.Input) {
				want := map[string]string{"a": "b", KubernetesVersionLabel: "v1.36.3_build.1"}
				if !reflect.DeepEqual(in.Labels, want) {
					t.Fatalf("labels = %v, want %v", in.Labels, want)
				}
			}},
		{"explicit empty taints mean no taints", bootstrapv1.WindowsConfigSpec{
			NodeRegistration: bootstrapv1.NodeRegistration{Taints: &[]bootstrapv1.Taint{}}}, params, func(t *testing.T, in userdata.Input) {
			if in.Taints == nil || len(in.Taints) != 0 {
				t.Fatalf("taints = %#v, want empty non-nil", in.Taints)
			}
		}},
		{"custom taints replace the default", bootstrapv1.WindowsConfigSpec{
			NodeRegistration: bootstrapv1.NodeRegistration{Taints: &[]bootstrapv1.Taint{{Key: "gpu", Effect: "NoExecute"}}}}, params,
			func(t *testing.T, in userdata.Input) {
				if want := []userdata.Taint{{Key: "gpu", Effect: "NoExecute"}}; !reflect.DeepEqual(in.Taints, want) {
					t.Fatalf("taints = %#v", in.Taints)
				}
			}},
		{"the node waits for the groups the manager adds; reuse only when allowed", bootstrapv1.WindowsConfigSpec{
			ActiveDirectory: &bootstrapv1.ActiveDirectory{Domain: "corp.example.com", OrganizationalUnit: "OU=K8s,DC=corp,DC=example,DC=com",
				Credentials: &bootstrapv1.SecretName{Name: "join"}, Groups: []string{"CN=hosts,DC=corp,DC=example,DC=com"},
				ComputerAccounts: &bootstrapv1.ComputerAccounts{Reuse: bootstrapv1.ComputerAccountAllow},
				Directory:        &bootstrapv1.Directory{URL: "ldaps://dc1", Credentials: bootstrapv1.SecretName{Name: "cleanup"}}}},
			params, func(t *testing.T, in userdata.Input) {
				if d := in.Domain; d == nil || !d.ReuseAccount || !reflect.DeepEqual(d.Groups, []string{"CN=hosts,DC=corp,DC=example,DC=com"}) {
					t.Fatalf("domain = %+v", in.Domain)
				}
			}},
		{"a domain join refuses an existing account by default", bootstrapv1.WindowsConfigSpec{
			ActiveDirectory: &bootstrapv1.ActiveDirectory{Domain: "corp.example.com", Credentials: &bootstrapv1.SecretName{Name: "join"}}},
			params, func(t *testing.T, in userdata.Input) {
				if d := in.Domain; d == nil || d.ReuseAccount || d.Groups != nil {
					t.Fatalf("domain = %+v", in.Domain)
				}
			}},
		{"pre-pull without a timeout gets the default; no images is no pre-pull", bootstrapv1.WindowsConfigSpec{
			PrePull: &bootstrapv1.PrePull{Images: []string{"busybox"}}}, params, func(t *testing.T, in userdata.Input) {
			if want := (&userdata.PrePull{Images: []string{"busybox"}, TimeoutSeconds: 1800}); !reflect.DeepEqual(in.PrePull, want) {
				t.Fatalf("prePull = %+v, want %+v", in.PrePull, want)
			}
			if in := BuildInput(&bootstrapv1.WindowsConfigSpec{PrePull: &bootstrapv1.PrePull{Images: []string{}}}, params); in.PrePull != nil {
				t.Fatalf("prePull = %+v for no images", in.PrePull)
			}
		}},
		{"prebaked ignores download entries", bootstrapv1.WindowsConfigSpec{Binaries: bootstrapv1.Binaries{
			Source: bootstrapv1.BinariesPrebaked, Kubelet: &bootstrapv1.Download{URL: "https://x/kubelet.exe"}}}, params,
			func(t *testing.T, in userdata.Input) {
				if in.Binaries.Kubelet != nil {
					t.Fatal("prebaked binaries must not download")
				}
			}},
		{"download maps urls and hashes", bootstrapv1.WindowsConfigSpec{Binaries: bootstrapv1.Binaries{
			Source: bootstrapv1.BinariesDownload, Directory: `D:\kube`,
			Kubelet: &bootstrapv1.Download{URL: "https://x/kubelet.exe", SHA256: "aa"},
			Kubeadm: &bootstrapv1.Download{URL: "https://x/kubeadm.exe", SHA256: "bb"}}}, params,
			func(t *testing.T, in userdata.Input) {
				b := in.Binaries
				if b.Directory != `D:\kube` || b.Kubelet.SHA256 != "aa" || b.Kubeadm.URL != "https://x/kubeadm.exe" || b.Containerd != nil {
					t.Fatalf("binaries = %+v", b)
				}
			}},
		{"kubelet configuration is handed on as the JSON it is", bootstrapv1.WindowsConfigSpec{
			KubeletConfiguration: &runtime.RawExtension{Raw: []byte(`{"maxPods":60}`)}}, params,
			func(t *testing.T, in userdata.Input) {
				if string(in.KubeletConfiguration) != `{"maxPods":60}` {
					t.Fatalf("kubelet configuration = %s", in.KubeletConfiguration)
				}
			}},
		{"defender exclusions can be turned off", bootstrapv1.WindowsConfigSpec{DefenderExclusions: ptr.To(false)}, params,
			func(t *testing.T, in userdata.Input) {
				if in.DefenderExclusions {
					t.Fatal("want exclusions off")
				}
			}},
		{"file content from secret replaces inline content", bootstrapv1.WindowsConfigSpec{Files: []bootstrapv1.File{
			{Path: `C:\a.txt`, Content: ptr.To("inline")},
			{Path: `C:\b.txt`, ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "k"}}, Append: true},
		}}, JoinParams{Files: []string{"", "from-secret"}}, func(t *testing.T, in userdata.Input) {
			want := []userdata.File{{Path: `C:\a.txt`, Content: "inline"}, {Path: `C:\b.txt`, Content: "from-secret", Append: true}}
			if !reflect.DeepEqual(in.Files, want) {
				t.Fatalf("files = %#v", in.Files)
			}
		}},
		{"kubelet args and users keep their order", bootstrapv1.WindowsConfigSpec{
			NodeRegistration: bootstrapv1.NodeRegistration{KubeletExtraArgs: []bootstrapv1.Arg{{Name: "v", Value: "4"}, {Name: "max-pods", Value: "50"}}},
			Users:            []bootstrapv1.User{{Name: "capi", Groups: []string{"Administrators"}, SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA"}}}}, params,
			func(t *testing.T, in userdata.Input) {
				if want := []userdata.Arg{{Name: "v", Value: "4"}, {Name: "max-pods", Value: "50"}}; !reflect.DeepEqual(in.KubeletExtraArgs, want) {
					t.Fatalf("args = %#v", in.KubeletExtraArgs)
				}
				if in.Users[0].Name != "capi" || in.Users[0].Groups[0] != "Administrators" {
					t.Fatalf("users = %#v", in.Users)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, BuildInput(&tc.spec, tc.p)) })
	}
}

// TestContainerdConfigVersion: config.toml's version follows the node's containerd line, from
// spec.containerd.version or the archive binaries.containerd downloads.
func TestContainerdConfigVersion(t *testing.T) {
	download := func(url string) bootstrapv1.Binaries {
		return bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload, Containerd: &bootstrapv1.Download{URL: url}}
	}
	const base = "https://github.com/containerd/containerd/releases/download/"
	for _, tc := range []struct {
		line bootstrapv1.ContainerdVersion
		bin  bootstrapv1.Binaries
		want int
	}{
		{"", bootstrapv1.Binaries{}, 2},
		{"1.7", bootstrapv1.Binaries{}, 2},
		{"2.0", bootstrapv1.Binaries{}, 2},
		{"2.1", bootstrapv1.Binaries{}, 3},
		{"2.2", bootstrapv1.Binaries{}, 3},
		{"2.3", bootstrapv1.Binaries{}, 4},
		{"2.10", bootstrapv1.Binaries{}, 4},
		{"3.0", bootstrapv1.Binaries{}, 4},
		{"", download(base + "v2.1.4/containerd-2.1.4-windows-amd64.tar.gz"), 3},
		{"", download(base + "v2.4.2/containerd-2.4.2-windows-amd64.tar.gz"), 4},
		{"", download(base + "v2.0.5/containerd-2.0.5-windows-amd64.tar.gz"), 2},
		{"", download(base + "v1.7.29/containerd-1.7.29-windows-amd64.tar.gz"), 2},
		{"", download("https://mirror.corp.example/containerd.tar.gz"), 2},
		{"1.7", download(base + "v2.1.4/containerd-2.1.4-windows-amd64.tar.gz"), 2},
	} {
		if got := containerdConfigVersion(tc.line, tc.bin); got != tc.want {
			t.Errorf("version %q, binaries %+v: config version %d, want %d", tc.line, tc.bin.Containerd, got, tc.want)
		}
	}
}
