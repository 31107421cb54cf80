package webhooks

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// spec is a mutation of a defaulted WindowsConfigSpec.
type spec = func(*bootstrapv1.WindowsConfigSpec)

// files sets one inline file per path.
func files(paths ...string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		for _, p := range paths {
			s.Files = append(s.Files, bootstrapv1.File{Path: p, Content: ptr.To("x")})
		}
	}
}

// inline sets one file with content in the given encoding.
func inline(enc bootstrapv1.Encoding, content string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.Files = []bootstrapv1.File{{Path: `C:\k\a`, Encoding: enc, Content: ptr.To(content)}}
	}
}

func secretFile(name, key string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.Files = []bootstrapv1.File{{Path: `C:\k\a`, ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: name, Key: key}}}}
	}
}

func labels(kv ...string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.NodeRegistration.Labels = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			s.NodeRegistration.Labels[kv[i]] = kv[i+1]
		}
	}
}

func taints(t ...bootstrapv1.Taint) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) { s.NodeRegistration.Taints = &t }
}

func kubeletArgs(nv ...string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		for i := 0; i < len(nv); i += 2 {
			s.NodeRegistration.KubeletExtraArgs = append(s.NodeRegistration.KubeletExtraArgs, bootstrapv1.Arg{Name: nv[i], Value: nv[i+1]})
		}
	}
}

var sha = strings.Repeat("a", 64)

// download switches binaries to source Download with a valid kubeadm and the given kubelet.
func download(kubeletURL, kubeletSHA string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.Binaries.Source = bootstrapv1.BinariesDownload
		s.Binaries.Kubelet = &bootstrapv1.Download{URL: kubeletURL, SHA256: kubeletSHA}
		s.Binaries.Kubeadm = &bootstrapv1.Download{URL: "https://dl.example.com/kubeadm.exe", SHA256: sha}
	}
}

func cni(plugin bootstrapv1.CNIPlugin, vni, port int32) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.CNI = bootstrapv1.CNI{Plugin: plugin, VXLANVNI: vni, VXLANPort: port}
	}
}

func users(u ...bootstrapv1.User) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) { s.Users = u }
}

func gzipBase64(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

const edKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE op@example"

// want is one expected error: its exact field path and a substring of its message.
type want struct{ field, detail string }

func TestValidateSpec(t *testing.T) {
	cases := []struct {
		name   string
		mutate spec
		want   []want // none: valid
	}{
		// Valid specs.
		{"defaults", func(*bootstrapv1.WindowsConfigSpec) {}, nil},
		{"forward slashes", files("C:/k/a.txt"), nil},
		{"mixed separators, other drive", files(`d:\data/app.config`), nil},
		{"names close to reserved ones", files(`C:\k\console.txt`, `C:\k\nul1`, `C:\k\com10`, `C:\k\.hidden`), nil},
		{"240 characters", files(`C:\` + strings.Repeat("a", 237)), nil},
		{"base64 with line breaks", inline(bootstrapv1.EncodingBase64, "aGVs\nbG8=\n"), nil},
		{"gzip+base64", inline(bootstrapv1.EncodingGzipBase64, gzipBase64("hi")), nil},
		{"secret file", secretFile("win-files", ".dockerconfigjson"), nil},
		{"allowed labels", labels("node.kubernetes.io/windows-build", "10.0.20348", "example.com/tier", "web",
			"topology.kubernetes.io/zone", "a", "kubernetes.io/os", "windows", "x.kubelet.kubernetes.io/y", "z", "notkubernetes.io/a", "b"), nil},
		{"no taints", taints(), nil},
		{"same taint key, other effect", taints(bootstrapv1.Taint{Key: "os", Value: "windows", Effect: "NoSchedule"},
			bootstrapv1.Taint{Key: "os", Value: "windows", Effect: "NoExecute"}), nil},
		{"kubelet args", kubeletArgs("max-pods", "60", "v", "2"), nil},
		{"download", download("https://dl.example.com/kubelet.exe", strings.ToUpper(sha)), nil},
		{"proxy with credentials", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Proxy = bootstrapv1.Proxy{HTTPProxy: "http://u:p@proxy:3128", HTTPSProxy: "http://proxy:3128", NoProxy: []string{"10.0.0.0/8", ".svc"}}
		}, nil},
		{"users", users(bootstrapv1.User{Name: "Administrator", SSHAuthorizedKeys: []string{edKey, "sk-ssh-ed25519@openssh.com AAAA"}}, bootstrapv1.User{Name: "capi"}), nil},
		{"flannel", cni(bootstrapv1.CNIFlannel, 0, 0), nil},
		{"calico on another port", cni(bootstrapv1.CNICalico, 5000, 8472), nil},

		// Paths.
		{"relative path", files(`k\a.txt`), []want{{"spec.files[0].path", "absolute Windows path"}}},
		{"root-relative path", files(`\k\a.txt`), []want{{"spec.files[0].path", "drive letter"}}},
		{"drive-relative path", files(`C:k`), []want{{"spec.files[0].path", "drive-relative"}}},
		{"UNC path", files(`\\srv\share\x`), []want{{"spec.files[0].path", "UNC and device paths"}}},
		{"UNC path with slashes", files(`//srv/share/x`), []want{{"spec.files[0].path", "UNC and device paths"}}},
		{"device path", files(`\\?\C:\x`), []want{{"spec.files[0].path", "UNC and device paths"}}},
		{"pipe path", files(`\\.\pipe\x`), []want{{"spec.files[0].path", "UNC and device paths"}}},
		{"dot dot", files(`C:\a\..\b`), []want{{"spec.files[0].path", ". or .."}}},
		{"dot", files(`C:/a/./b`), []want{{"spec.files[0].path", ". or .."}}},
		{"reserved name", files(`C:\nul`), []want{{"spec.files[0].path", "reserved Windows device name"}}},
		{"reserved name with extension", files(`C:\con.txt`), []want{{"spec.files[0].path", `"con.txt" is a reserved`}}},
		{"reserved directory", files(`C:\k\LPT9\x.log`), []want{{"spec.files[0].path", `"LPT9" is a reserved`}}},
		{"reserved COM", files(`C:\k\Com1.tar.gz`), []want{{"spec.files[0].path", "reserved"}}},
		{"trailing dot", files(`C:\a\b.`), []want{{"spec.files[0].path", "ends with a space or a dot"}}},
		{"trailing space", files(`C:\a \b`), []want{{"spec.files[0].path", `"a " ends with a space`}}},
		{"trailing separator", files(`C:\a\b\`), []want{{"spec.files[0].path", "must not end with a path separator"}}},
		{"drive root", files(`C:/`), []want{{"spec.files[0].path", "must not end with a path separator"}}},
		{"less than", files(`C:\a<b`), []want{{"spec.files[0].path", `'<'`}}},
		{"pipe character", files(`C:\a|b`), []want{{"spec.files[0].path", `'|'`}}},
		{"quote", files(`C:\a"b`), []want{{"spec.files[0].path", `'"'`}}},
		{"alternate data stream", files(`C:\a:stream`), []want{{"spec.files[0].path", `':'`}}},
		{"wildcard", files(`C:\k\*.txt`), []want{{"spec.files[0].path", `'*'`}}},
		{"control character", files("C:\\k\\a\tb"), []want{{"spec.files[0].path", `'\t'`}}},
		{"empty segment", files(`C:\a\\b`), []want{{"spec.files[0].path", "empty path segments"}}},
		{"empty first segment", files(`C:\\a`), []want{{"spec.files[0].path", "empty path segments"}}},
		{"too long", files(`C:\` + strings.Repeat("a", 238)), []want{{"spec.files[0].path", "at most 240"}}},
		{"duplicate path", files(`c:\K\A.TXT`, `C:\k\b`, `C:/k/a.txt`), []want{{"spec.files[2].path", `same as spec.files[0].path (paths compare case-insensitively`}}},

		// File content.
		{"content and contentFrom", func(s *bootstrapv1.WindowsConfigSpec) {
			secretFile("s", "k")(s)
			s.Files[0].Content = ptr.To("x")
		}, []want{{"spec.files[0].contentFrom", "set exactly one of content and contentFrom"}}},
		{"no content", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{{Path: `C:\k\a`}} },
			[]want{{"spec.files[0].content", "set exactly one of content and contentFrom"}}},
		{"bad secret name", secretFile("Bad_Name", "k"), []want{{"spec.files[0].contentFrom.secret.name", "RFC 1123"}}},
		{"bad secret key", secretFile("s", "a/b"), []want{{"spec.files[0].contentFrom.secret.key", "valid config key"}}},
		{"bad base64", inline(bootstrapv1.EncodingBase64, "!!!"), []want{{"spec.files[0].content", "not valid base64"}}},
		{"base64 that is not gzip", inline(bootstrapv1.EncodingGzipBase64, "aGk="), []want{{"spec.files[0].content", "not gzip data"}}},

		// Labels.
		{"node-role label", labels("node-role.kubernetes.io/worker", ""), []want{{"spec.nodeRegistration.labels[node-role.kubernetes.io/worker]", "kubelet cannot set node-role.kubernetes.io"}}},
		{"kubernetes.io label", labels("kubernetes.io/foo", "bar"), []want{{"spec.nodeRegistration.labels[kubernetes.io/foo]", "NodeRestriction"}}},
		{"k8s.io subdomain label", labels("team.k8s.io/x", "y"), []want{{"spec.nodeRegistration.labels[team.k8s.io/x]", "NodeRestriction"}}},
		{"os label not windows", labels("kubernetes.io/os", "linux"), []want{{"spec.nodeRegistration.labels[kubernetes.io/os]", "is windows"}}},
		{"bad label value", labels("tier", "a b"), []want{{"spec.nodeRegistration.labels[tier]", "label value"}}},
		{"bad label key", labels("-x", "y"), []want{{"spec.nodeRegistration.labels[-x]", "label key"}}},

		// Taints.
		{"bad taint key", taints(bootstrapv1.Taint{Key: "a b", Effect: "NoSchedule"}), []want{{"spec.nodeRegistration.taints[0].key", "name part must consist of"}}},
		{"bad taint value", taints(bootstrapv1.Taint{Key: "a", Value: "x y", Effect: "NoSchedule"}), []want{{"spec.nodeRegistration.taints[0].value", "alphanumeric"}}},
		{"bad taint effect", taints(bootstrapv1.Taint{Key: "a", Effect: "Never"}), []want{{"spec.nodeRegistration.taints[0].effect", "supported values"}}},
		{"duplicate taint", taints(bootstrapv1.Taint{Key: "os", Value: "windows", Effect: "NoSchedule"}, bootstrapv1.Taint{Key: "os", Value: "x", Effect: "NoSchedule"}),
			[]want{{"spec.nodeRegistration.taints[1]", "spec.nodeRegistration.taints[0] has the same key and effect"}}},

		// Kubelet flags.
		{"owned flag with a field", kubeletArgs("node-labels", "a=b"), []want{{"spec.nodeRegistration.kubeletExtraArgs[0].name", "from spec.nodeRegistration.labels"}}},
		{"owned flag", kubeletArgs("max-pods", "60", "windows-service", ""), []want{{"spec.nodeRegistration.kubeletExtraArgs[1].name", "Windows service"}}},
		{"hostname-override", kubeletArgs("hostname-override", "x"), []want{{"spec.nodeRegistration.kubeletExtraArgs[0].name", "spec.nodeRegistration.name"}}},
		{"flag with dashes", kubeletArgs("--max-pods", "60"), []want{{"spec.nodeRegistration.kubeletExtraArgs[0].name", "without leading dashes"}}},
		{"flag with underscore", kubeletArgs("max_pods", "60"), []want{{"spec.nodeRegistration.kubeletExtraArgs[0].name", "lower-case"}}},
		{"flag no kubelet has", kubeletArgs("max-pods", "60", "pod-infra-image", "x"), []want{{"spec.nodeRegistration.kubeletExtraArgs[1].name", "no Windows kubelet v1.31 to v1.37 has a flag --pod-infra-image"}}},
		{"flag only older kubelets have", kubeletArgs("pod-infra-container-image", "registry.k8s.io/pause:3.10"), nil},
		{"duplicate flag", kubeletArgs("v", "2", "v", "4"), []want{{"spec.nodeRegistration.kubeletExtraArgs[1].name", "same as spec.nodeRegistration.kubeletExtraArgs[0].name"}}},
		{"value with quote", kubeletArgs("v", `2" --x`), []want{{"spec.nodeRegistration.kubeletExtraArgs[0].value", "double quotes"}}},
		{"value with newline", kubeletArgs("v", "2\n"), []want{{"spec.nodeRegistration.kubeletExtraArgs[0].value", "line breaks"}}},

		// CNI.
		{"flannel VNI", cni(bootstrapv1.CNIFlannel, 5000, 0), []want{{"spec.cni.vxlanVNI", "flannel on Windows requires vxlanVNI 4096"}}},
		{"flannel port", cni(bootstrapv1.CNIFlannel, 0, 8472), []want{{"spec.cni.vxlanPort", "4789"}}},
		{"flannel VNI and port", cni(bootstrapv1.CNIFlannel, 1, 1), []want{{"spec.cni.vxlanVNI", "4096"}, {"spec.cni.vxlanPort", "4789"}}},
		{"calico VNI", cni(bootstrapv1.CNICalico, 4095, 8472), []want{{"spec.cni.vxlanVNI", "at least 4096"}}},

		// Binaries.
		{"download needs kubelet", func(s *bootstrapv1.WindowsConfigSpec) {
			download("https://dl.example.com/k.exe", sha)(s)
			s.Binaries.Kubelet = nil
		}, []want{{"spec.binaries.kubelet", "source Download needs a url and sha256"}}},
		{"URL with credentials", download("https://u:p@dl.example.com/k.exe", sha), []want{{"spec.binaries.kubelet.url", "instead of putting them in the URL"}}},
		{"credentials are redacted", download("https://u:secret@dl.example.com/k.exe", sha), []want{{"spec.binaries.kubelet.url", "u:xxxxx@"}}},
		{"ftp URL", download("ftp://dl.example.com/k.exe", sha), []want{{"spec.binaries.kubelet.url", "http:// or https://"}}},
		{"URL without host", download("https:///k.exe", sha), []want{{"spec.binaries.kubelet.url", "must name a host"}}},
		{"short sha", download("https://dl.example.com/k.exe", "abc"), []want{{"spec.binaries.kubelet.sha256", "64 hex digits"}}},
		{"URL without download", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries.Containerd = &bootstrapv1.Download{URL: "https://dl.example.com/c.tgz", SHA256: sha}
		}, []want{{"spec.binaries.containerd", "only used with source: Download"}}},
		{"kube-log-runner without download", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries.KubeLogRunner = &bootstrapv1.Download{URL: "https://dl.example.com/kube-log-runner.exe", SHA256: sha}
		}, []want{{"spec.binaries.kubeLogRunner", "only used with source: Download"}}},
		{"kube-log-runner short sha", func(s *bootstrapv1.WindowsConfigSpec) {
			download("https://dl.example.com/k.exe", sha)(s)
			s.Binaries.KubeLogRunner = &bootstrapv1.Download{URL: "https://dl.example.com/kube-log-runner.exe", SHA256: "abc"}
		}, []want{{"spec.binaries.kubeLogRunner.sha256", "64 hex digits"}}},
		{"relative binaries directory", func(s *bootstrapv1.WindowsConfigSpec) { s.Binaries.Directory = `k` }, []want{{"spec.binaries.directory", "absolute"}}},
		{"binaries directory with separator", func(s *bootstrapv1.WindowsConfigSpec) { s.Binaries.Directory = `C:\k\` }, []want{{"spec.binaries.directory", "separator"}}},

		// Proxy.
		{"proxy scheme", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.HTTPProxy = "socks5://p:1080" }, []want{{"spec.proxy.httpProxy", "http:// or https://"}}},
		{"https proxy without host", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.HTTPSProxy = "http://" }, []want{{"spec.proxy.httpsProxy", "host"}}},
		{"noProxy comma", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.NoProxy = []string{"a", "a,b"} }, []want{{"spec.proxy.noProxy[1]", "without commas"}}},

		// Users.
		{"built-in user", users(bootstrapv1.User{Name: "Guest"}), []want{{"spec.users[0].name", "built-in Windows account"}}},
		{"duplicate user", users(bootstrapv1.User{Name: "capi"}, bootstrapv1.User{Name: "CAPI"}), []want{{"spec.users[1].name", "same as spec.users[0].name"}}},
		{"bad ssh key", users(bootstrapv1.User{Name: "capi", SSHAuthorizedKeys: []string{"not a key"}}), []want{{"spec.users[0].sshAuthorizedKeys[0]", "one public key line"}}},
		{"two ssh keys in one", users(bootstrapv1.User{Name: "capi", SSHAuthorizedKeys: []string{edKey + "\n" + edKey}}), []want{{"spec.users[0].sshAuthorizedKeys[0]", "one public key line"}}},

		// Commands, time, format.
		{"blank command", func(s *bootstrapv1.WindowsConfigSpec) { s.PreJoinCommands = []string{"  \n"} }, []want{{"spec.preJoinCommands[0]", "must not be empty"}}},
		{"NUL in command", func(s *bootstrapv1.WindowsConfigSpec) { s.PostJoinCommands = []string{"a", "b\x00"} }, []want{{"spec.postJoinCommands[1]", "NUL"}}},
		{"blank timezone", func(s *bootstrapv1.WindowsConfigSpec) { s.Timezone = "  " }, []want{{"spec.timezone", "time zone"}}},
		{"pre-pull images", func(s *bootstrapv1.WindowsConfigSpec) {
			s.PrePull = &bootstrapv1.PrePull{Images: []string{"mcr.microsoft.com/windows/servercore:ltsc2022", "busybox", "registry.corp.example:5000/app@sha256:" + sha}}
		}, nil},
		{"pre-pull image that is no reference", func(s *bootstrapv1.WindowsConfigSpec) {
			s.PrePull = &bootstrapv1.PrePull{Images: []string{"mcr.microsoft.com/windows/servercore:ltsc2022", "Servercore:LTSC 2022"}}
		}, []want{{"spec.prePull.images[1]", "must be an image reference as a pod names it"}}},
		{"duplicate NTP server", func(s *bootstrapv1.WindowsConfigSpec) { s.NTP.Servers = []string{"a", "b", "A"} }, []want{{"spec.ntp.servers[2]", "same as spec.ntp.servers[0]"}}},
		{"bad format", func(s *bootstrapv1.WindowsConfigSpec) { s.Format = "ignition" }, []want{{"spec.format", "supported values"}}},

		// All problems are reported, not only the first.
		{"several problems", func(s *bootstrapv1.WindowsConfigSpec) {
			files("rel", `C:\ok`, `C:\OK`)(s)
			s.PreJoinCommands = []string{""}
			s.Users = []bootstrapv1.User{{Name: "system"}}
			labels("node-role.kubernetes.io/worker", "")(s)
		}, []want{
			{"spec.nodeRegistration.labels[node-role.kubernetes.io/worker]", "NodeRestriction"},
			{"spec.users[0].name", "built-in"},
			{"spec.files[0].path", "absolute"},
			{"spec.files[2].path", "same as spec.files[1].path"},
			{"spec.preJoinCommands[0]", "empty"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &bootstrapv1.WindowsConfigSpec{}
			DefaultSpec(s)
			tc.mutate(s)
			errs := ValidateSpec(s, field.NewPath("spec"))
			g.Expect(errs).To(HaveLen(len(tc.want)), "%v", errs)
			for i, w := range tc.want {
				g.Expect(errs[i].Field).To(Equal(w.field))
				g.Expect(errs[i].Error()).To(ContainSubstring(w.detail))
			}
		})
	}
}

// TestKubeletFlagWarnings: a flag some supported kubelets lack is admitted with a warning that
// names them; a flag every supported kubelet has as it is draws none.
func TestKubeletFlagWarnings(t *testing.T) {
	g := NewWithT(t)
	s := &bootstrapv1.WindowsConfigSpec{}
	kubeletArgs("v", "2", "pod-infra-container-image", "registry.k8s.io/pause:3.10")(s)
	g.Expect(specWarnings(s, field.NewPath("spec"))).To(ContainElement(
		HavePrefix("spec.nodeRegistration.kubeletExtraArgs[1].name: the v1.35 to v1.37 kubelets have no flag --pod-infra-container-image")))
	s.NodeRegistration.KubeletExtraArgs = s.NodeRegistration.KubeletExtraArgs[:1]
	g.Expect(specWarnings(s, field.NewPath("spec"))).To(BeEmpty())
}

func TestValidateSpecTemplatePath(t *testing.T) {
	g := NewWithT(t)
	s := &bootstrapv1.WindowsConfigSpec{}
	kubeletArgs("register-with-taints", "a:NoSchedule")(s)
	errs := ValidateSpec(s, field.NewPath("spec", "template", "spec"))
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Field).To(Equal("spec.template.spec.nodeRegistration.kubeletExtraArgs[0].name"))
	g.Expect(errs[0].Detail).To(ContainSubstring("from spec.template.spec.nodeRegistration.taints"))
}

func TestDefaultSpec(t *testing.T) {
	g := NewWithT(t)
	s := &bootstrapv1.WindowsConfigSpec{}
	DefaultSpec(s)
	g.Expect(*s).To(Equal(bootstrapv1.WindowsConfigSpec{
		Format:             bootstrapv1.FormatCloudConfig,
		NodeRegistration:   bootstrapv1.NodeRegistration{CRISocket: bootstrapv1.DefaultCRISocket},
		Containerd:         bootstrapv1.Containerd{PauseImage: "registry.k8s.io/pause:3.10"},
		CNI:                bootstrapv1.CNI{Plugin: bootstrapv1.CNICalico, VXLANVNI: 4096, VXLANPort: 4789},
		Binaries:           bootstrapv1.Binaries{Source: bootstrapv1.BinariesPrebaked, Directory: `C:\k`},
		DefenderExclusions: ptr.To(true),
	}))
}

func TestDefaultSpecIsIdempotentAndKeepsValues(t *testing.T) {
	g := NewWithT(t)
	s := &bootstrapv1.WindowsConfigSpec{CNI: bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel}, DefenderExclusions: ptr.To(false), Format: bootstrapv1.FormatPowerShell}
	DefaultSpec(s)
	once := s.DeepCopy()
	DefaultSpec(s)
	g.Expect(s).To(Equal(once))
	g.Expect(s.Format).To(Equal(bootstrapv1.FormatPowerShell))
	g.Expect(s.CNI).To(Equal(bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel, VXLANVNI: 4096, VXLANPort: 4789}))
	g.Expect(*s.DefenderExclusions).To(BeFalse(), "an explicit false is kept")
}

// FuzzValidateSpec: arbitrary paths, labels, kubelet flags and kubelet configuration never panic
// the validator. Without
// -fuzz only the seeds run.
func FuzzValidateSpec(f *testing.F) {
	f.Add(`C:\k\a.txt`, "app", "web", "max-pods", "60")
	f.Add(`\\?\`, "kubernetes.io/", "", "-", "\"")
	f.Add("C:", "a/b/c", "\x00", "node-labels", "\n")
	f.Add("C:\\\xff\\\u00b9", "node-role.kubernetes.io/x", "H4sI", "", "")
	f.Add(`C:\k\a.txt`, "maxPods", `{"logging": {"options": {"json": {"x": 1}}}, "shutdownGracePeriodByPodPriority": [{"y": 2}]}`, "max-pods", "7")
	f.Fuzz(func(t *testing.T, path, key, value, arg, argValue string) {
		s := &bootstrapv1.WindowsConfigSpec{
			Files: []bootstrapv1.File{{Path: path, Content: ptr.To(value), Encoding: bootstrapv1.EncodingGzipBase64}, {Path: value, Content: ptr.To(path)}},
			NodeRegistration: bootstrapv1.NodeRegistration{
				Labels:           map[string]string{key: value},
				Taints:           &[]bootstrapv1.Taint{{Key: key, Value: value, Effect: argValue}},
				KubeletExtraArgs: []bootstrapv1.Arg{{Name: arg, Value: argValue}},
			},
			Binaries: bootstrapv1.Binaries{Directory: path, Source: bootstrapv1.BinariesDownload, Kubelet: &bootstrapv1.Download{URL: argValue, SHA256: value}},
			Proxy:    bootstrapv1.Proxy{HTTPProxy: key, NoProxy: []string{value}},
			Users:    []bootstrapv1.User{{Name: arg, SSHAuthorizedKeys: []string{value}}},
		}
		// The kubelet configuration: value itself when it is JSON, else an object built of the inputs.
		kubelet := []byte(value)
		if !json.Valid(kubelet) {
			kubelet, _ = json.Marshal(map[string]any{key: argValue, "evictionHard": map[string]string{key: value},
				"systemReserved": map[string]string{arg: value}, "logging": map[string]string{key: value}})
		}
		s.KubeletConfiguration = &runtime.RawExtension{Raw: kubelet}
		for _, err := range ValidateSpec(s, field.NewPath("spec")) {
			if err.Field == "" || err.Error() == "" {
				t.Fatalf("error without field or message: %#v", err)
			}
		}
	})
}
