package userdata

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
)

// fullInput sets every field, so each rule of the renderer is exercised.
func fullInput(format Format) Input {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte("zipped\n"))
	_ = w.Close()
	return Input{
		Format:            format,
		NodeName:          "win-a1",
		KubernetesVersion: "v1.36.3",
		Join: Join{
			APIServerEndpoint:     "10.0.0.10:6443",
			Token:                 "abcdef.0123456789abcdef",
			CACertHashes:          []string{"sha256:" + string(bytes.Repeat([]byte("a"), 64))},
			CRISocket:             "npipe:////./pipe/containerd-containerd",
			IgnorePreflightErrors: []string{"SystemVerification"},
		},
		Labels:           map[string]string{"zone": "b", "app": "iis", "node.kubernetes.io/windows-build": "10.0.20348"},
		Taints:           []Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}, {Key: "dedicated", Effect: "NoExecute"}},
		KubeletExtraArgs: []Arg{{Name: "max-pods", Value: "60"}, {Name: "windows-priorityclass", Value: "HIGH_PRIORITY_CLASS"}},
		PauseImage:       "registry.k8s.io/pause:3.10",
		HyperVIsolation:  true,
		CNI:              CNI{Plugin: "flannel", VXLANVNI: 4096, VXLANPort: 4789},
		Binaries: Binaries{
			Directory: `C:\k`,
			Kubelet:   &Download{URL: "https://dl.k8s.io/v1.36.3/bin/windows/amd64/kubelet.exe", SHA256: string(bytes.Repeat([]byte("B"), 64))},
			Kubeadm:   &Download{URL: "https://dl.k8s.io/v1.36.3/bin/windows/amd64/kubeadm.exe", SHA256: string(bytes.Repeat([]byte("c"), 64))},
		},
		Proxy:      Proxy{HTTPProxy: "http://proxy:3128", HTTPSProxy: "http://proxy:3128", NoProxy: []string{"10.0.0.0/8", ".svc"}},
		NTPServers: []string{"time.windows.com"},
		Timezone:   "UTC",
		Users:      []User{{Name: "capi", Groups: []string{"Administrators"}, SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA capi@example"}}},
		Files: []File{
			{Path: `C:\k\plain.txt`, Content: "plain 'quoted' $(not code)\n"},
			{Path: `C:\k\b64.txt`, Encoding: "base64", Content: base64.StdEncoding.EncodeToString([]byte("decoded\n"))},
			{Path: `C:\k\gz.txt`, Encoding: "gzip", Content: gz.String()},
			{Path: `C:\k\gzb64.txt`, Encoding: "gzip+base64", Content: base64.StdEncoding.EncodeToString(gz.Bytes())},
			{Path: `C:\Windows\System32\drivers\etc\hosts`, Content: "10.0.0.5 registry\n", Append: true},
		},
		PreJoinCommands:    []string{"Write-Output 'before' # ünïcode"},
		PostJoinCommands:   []string{"Write-Output 'after'"},
		DefenderExclusions: true,
		Registries:         testRegistries(),
		Disks: []Disk{
			{Target: 0, LUN: 1, FileSystem: "NTFS", Label: "containerd", DriveLetter: "E"},
			{Target: 0, LUN: 2, FileSystem: "ReFS", Label: "scratch", AllocationUnitSize: 65536, MountPath: `C:\scratch`},
		},
		ContainerdRoot:  `E:\containerd\root`,
		ContainerdState: `E:\containerd\state`,
		Domain: &Domain{Name: "corp.example.com", OrganizationalUnit: "OU=Kubernetes,DC=corp,DC=example,DC=com",
			DNSServers: []string{"10.0.0.53"}, Username: `CORP\svc-join`, Password: "j0in'$(x)"},
	}
}

// testCA signs no certificate: containerd only has to load it.
//
//go:embed testdata/registry-ca.pem
var testCA string

// testRegistries cover every registry setting: ordered mirrors with their own CA, path and
// credentials, a private registry with a port, Docker Hub credentials and a _default mirror.
func testRegistries() []Registry {
	return []Registry{
		{Host: "registry.k8s.io", Mirrors: []Mirror{
			{URL: "https://mirror.corp.example:5000", Access: Access{CA: testCA, Username: "puller", Password: "pa'ss\"w$(0)rd"}},
			{URL: "http://cache.corp.example/v2/k8s", Capabilities: []string{"pull"}, OverridePath: true},
		}},
		{Host: "registry.corp.example:5000", Access: Access{CA: testCA, Username: "robot$ci", Password: "secret"}},
		{Host: "docker.io", Access: Access{Username: "hub-user", Password: "hub-token"}},
		{Host: "_default", Mirrors: []Mirror{{URL: "https://proxy.corp.example", Access: Access{InsecureSkipVerify: true}}}},
	}
}

// minimalInput is what a default WindowsConfig produces.
func minimalInput(format Format) Input {
	return Input{
		Format:            format,
		KubernetesVersion: "v1.36.3",
		Join: Join{
			APIServerEndpoint: "10.0.0.10:6443",
			Token:             "abcdef.0123456789abcdef",
			CACertHashes:      []string{"sha256:" + string(bytes.Repeat([]byte("0"), 64))},
			CRISocket:         "npipe:////./pipe/containerd-containerd",
		},
		Taints:             []Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}},
		PauseImage:         "registry.k8s.io/pause:3.10",
		CNI:                CNI{Plugin: "calico", VXLANVNI: 4096, VXLANPort: 4789},
		Binaries:           Binaries{Directory: `C:\k`},
		DefenderExclusions: true,
	}
}
