package webhooks

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

func file(path string) bootstrapv1.File {
	return bootstrapv1.File{Path: path, Content: ptr.To("x")}
}

func gzipped(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

const edKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE op@example"

func TestValidateSpec(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*bootstrapv1.WindowsConfigSpec)
		// field is the path of the one expected error ("" = valid); detail a substring of it.
		field, detail string
	}{
		{"defaults are valid", func(*bootstrapv1.WindowsConfigSpec) {}, "", ""},
		{"forward slashes", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file("C:/k/a.txt")} }, "", ""},
		{"other drive", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`D:\data\app.config`)} }, "", ""},
		{"relative path", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`k\a.txt`)} }, "spec.files[0].path", "absolute Windows path"},
		{"drive relative", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:k\a.txt`)} }, "spec.files[0].path", "drive-relative"},
		{"UNC", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`\\srv\share\x`)} }, "spec.files[0].path", "UNC"},
		{"device path", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`\\?\C:\x`)} }, "spec.files[0].path", "UNC and device"},
		{"dot dot", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\a\..\b`)} }, "spec.files[0].path", ". or .."},
		{"reserved name", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\nul`)} }, "spec.files[0].path", "reserved Windows device name"},
		{"reserved with ext", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\k\CON.txt`)} }, "spec.files[0].path", "reserved"},
		{"trailing dot", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\a\b.`)} }, "spec.files[0].path", "ends with a space or a dot"},
		{"trailing separator", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\a\b\`)} }, "spec.files[0].path", "separator"},
		{"bad char", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\a<b`)} }, "spec.files[0].path", `'<'`},
		{"colon inside", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\a:stream`)} }, "spec.files[0].path", `':'`},
		{"empty segment", func(s *bootstrapv1.WindowsConfigSpec) { s.Files = []bootstrapv1.File{file(`C:\a\\b`)} }, "spec.files[0].path", "empty path segments"},
		{"too long", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{file(`C:\` + strings.Repeat("a", 240))}
		}, "spec.files[0].path", "at most 240"},
		{"duplicate path", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{file(`c:\K\A.TXT`), file(`C:/k/a.txt`)}
		}, "spec.files[1].path", "same as index 0"},
		{"content and contentFrom", func(s *bootstrapv1.WindowsConfigSpec) {
			f := file(`C:\a`)
			f.ContentFrom = &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "k"}}
			s.Files = []bootstrapv1.File{f}
		}, "spec.files[0]", "exactly one"},
		{"bad secret name", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\a`, ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "Bad_Name", Key: "k"}}}}
		}, "spec.files[0].contentFrom.secret.name", "RFC 1123"},
		{"bad secret key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\a`, ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "a/b"}}}}
		}, "spec.files[0].contentFrom.secret.key", "valid config key"},
		{"bad base64", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\a`, Encoding: bootstrapv1.EncodingBase64, Content: ptr.To("!!!")}}
		}, "spec.files[0].content", "not valid base64"},
		{"good gzip+base64", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\a`, Encoding: bootstrapv1.EncodingGzipBase64, Content: ptr.To(gzipped("hi"))}}
		}, "", ""},
		{"base64 not gzip", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\a`, Encoding: bootstrapv1.EncodingGzipBase64, Content: ptr.To("aGk=")}}
		}, "spec.files[0].content", "not gzip"},
		{"allowed labels", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"node.kubernetes.io/windows-build": "10.0.20348", "example.com/tier": "web", "topology.kubernetes.io/zone": "a"}
		}, "", ""},
		{"node-role label", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"node-role.kubernetes.io/worker": ""}
		}, "spec.nodeRegistration.labels[node-role.kubernetes.io/worker]", "NodeRestriction"},
		{"restricted label", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"kubernetes.io/foo": "bar"}
		}, "spec.nodeRegistration.labels[kubernetes.io/foo]", "NodeRestriction"},
		{"os label not windows", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"kubernetes.io/os": "linux"}
		}, "spec.nodeRegistration.labels[kubernetes.io/os]", "windows"},
		{"bad label value", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"tier": "a b"}
		}, "spec.nodeRegistration.labels[tier]", "label value"},
		{"bad label key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"-x": "y"}
		}, "spec.nodeRegistration.labels[-x]", "label key"},
		{"no taints", func(s *bootstrapv1.WindowsConfigSpec) { s.NodeRegistration.Taints = &[]bootstrapv1.Taint{} }, "", ""},
		{"bad taint key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a b", Effect: "NoSchedule"}}
		}, "spec.nodeRegistration.taints[0].key", "name part must consist of"},
		{"bad taint effect", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a", Effect: "Never"}}
		}, "spec.nodeRegistration.taints[0].effect", "supported values"},
		{"duplicate taint", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}, {Key: "os", Value: "x", Effect: "NoSchedule"}}
		}, "spec.nodeRegistration.taints[1]", "already set at index 0"},
		{"owned kubelet flag", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "node-labels", Value: "a=b"}}
		}, "spec.nodeRegistration.kubeletExtraArgs[0].name", "use spec.nodeRegistration.labels"},
		{"kubelet flag with dashes", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "--max-pods", Value: "60"}}
		}, "spec.nodeRegistration.kubeletExtraArgs[0].name", "without leading dashes"},
		{"kubelet value with quote", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "v", Value: `2" --x`}}
		}, "spec.nodeRegistration.kubeletExtraArgs[0].value", "quotes"},
		{"flannel VNI", func(s *bootstrapv1.WindowsConfigSpec) {
			s.CNI = bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel, VXLANVNI: 5000}
		}, "spec.cni.vxlanVNI", "4096"},
		{"download needs URLs", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries.Source = bootstrapv1.BinariesDownload
			s.Binaries.Kubeadm = &bootstrapv1.Download{URL: "https://dl.example.com/a.exe", SHA256: strings.Repeat("b", 64)}
		}, "spec.binaries.kubelet", "source Download"},
		{"download with credentials", func(s *bootstrapv1.WindowsConfigSpec) {
			d := &bootstrapv1.Download{URL: "https://u:p@dl.example.com/k.exe", SHA256: strings.Repeat("a", 64)}
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload, Directory: `C:\k`, Kubelet: d, Kubeadm: &bootstrapv1.Download{URL: "https://dl.example.com/a.exe", SHA256: strings.Repeat("b", 64)}}
		}, "spec.binaries.kubelet.url", "credentials"},
		{"short sha", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload, Directory: `C:\k`,
				Kubelet: &bootstrapv1.Download{URL: "https://dl.example.com/k.exe", SHA256: "abc"},
				Kubeadm: &bootstrapv1.Download{URL: "https://dl.example.com/a.exe", SHA256: strings.Repeat("b", 64)}}
		}, "spec.binaries.kubelet.sha256", "64 hex digits"},
		{"URL without download", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries.Containerd = &bootstrapv1.Download{URL: "https://dl.example.com/c.tgz", SHA256: strings.Repeat("a", 64)}
		}, "spec.binaries.containerd", "only used with source: Download"},
		{"relative binaries dir", func(s *bootstrapv1.WindowsConfigSpec) { s.Binaries.Directory = `k` }, "spec.binaries.directory", "absolute"},
		{"proxy scheme", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.HTTPProxy = "socks5://p:1080" }, "spec.proxy.httpProxy", "http or https"},
		{"noProxy comma", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.NoProxy = []string{"a,b"} }, "spec.proxy.noProxy[0]", "without commas"},
		{"builtin user", func(s *bootstrapv1.WindowsConfigSpec) { s.Users = []bootstrapv1.User{{Name: "Guest"}} }, "spec.users[0].name", "built-in"},
		{"duplicate user", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Users = []bootstrapv1.User{{Name: "capi"}, {Name: "CAPI"}}
		}, "spec.users[1].name", "same as index 0"},
		{"bad ssh key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Users = []bootstrapv1.User{{Name: "capi", SSHAuthorizedKeys: []string{"not a key"}}}
		}, "spec.users[0].sshAuthorizedKeys[0]", "one public key line"},
		{"good ssh key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Users = []bootstrapv1.User{{Name: "capi", Groups: []string{"Administrators"}, SSHAuthorizedKeys: []string{edKey}}}
		}, "", ""},
		{"blank command", func(s *bootstrapv1.WindowsConfigSpec) { s.PreJoinCommands = []string{"  "} }, "spec.preJoinCommands[0]", "must not be empty"},
		{"duplicate ntp", func(s *bootstrapv1.WindowsConfigSpec) { s.NTP.Servers = []string{"a", "A"} }, "spec.ntp.servers[1]", "same as index 0"},
		{"bad format", func(s *bootstrapv1.WindowsConfigSpec) { s.Format = "ignition" }, "spec.format", "supported values"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := &bootstrapv1.WindowsConfigSpec{}
			DefaultSpec(spec)
			tc.mutate(spec)
			errs := ValidateSpec(spec, field.NewPath("spec"))
			if tc.field == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errs).To(HaveLen(1), "%v", errs)
			g.Expect(errs[0].Field).To(Equal(tc.field))
			g.Expect(errs[0].Error()).To(ContainSubstring(tc.detail))
		})
	}
}

func TestValidateSpecCollectsAllErrors(t *testing.T) {
	g := NewWithT(t)
	spec := &bootstrapv1.WindowsConfigSpec{
		Files:           []bootstrapv1.File{file("rel")},
		PreJoinCommands: []string{""},
		Users:           []bootstrapv1.User{{Name: "system"}},
	}
	g.Expect(ValidateSpec(spec, field.NewPath("spec"))).To(HaveLen(3))
}

func TestDefaultSpecIsIdempotent(t *testing.T) {
	g := NewWithT(t)
	spec := &bootstrapv1.WindowsConfigSpec{CNI: bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel}, DefenderExclusions: ptr.To(false)}
	DefaultSpec(spec)
	once := spec.DeepCopy()
	DefaultSpec(spec)
	g.Expect(spec).To(Equal(once))
	g.Expect(spec.Format).To(Equal(bootstrapv1.FormatCloudConfig))
	g.Expect(spec.CNI).To(Equal(bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel, VXLANVNI: 4096, VXLANPort: 4789}))
	g.Expect(spec.Binaries.Directory).To(Equal(`C:\k`))
	g.Expect(*spec.DefenderExclusions).To(BeFalse(), "an explicit false is kept")
}

// FuzzValidateSpec: arbitrary paths, labels and args never panic the validator.
func FuzzValidateSpec(f *testing.F) {
	f.Add(`C:\k\a.txt`, "app", "web", "max-pods", "60")
	f.Add(`\\?\`, "kubernetes.io/", "", "-", "\"")
	f.Add("C:", "a/b/c", "\x00", "node-labels", "\n")
	f.Fuzz(func(t *testing.T, path, key, value, arg, argValue string) {
		spec := &bootstrapv1.WindowsConfigSpec{
			Files:            []bootstrapv1.File{{Path: path, Content: ptr.To(value), Encoding: bootstrapv1.EncodingGzipBase64}},
			NodeRegistration: bootstrapv1.NodeRegistration{Labels: map[string]string{key: value}, KubeletExtraArgs: []bootstrapv1.Arg{{Name: arg, Value: argValue}}},
			Binaries:         bootstrapv1.Binaries{Directory: path},
		}
		_ = ValidateSpec(spec, field.NewPath("spec"))
	})
}
