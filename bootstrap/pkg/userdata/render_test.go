package userdata

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/yaml"
)

func render(t *testing.T, in Input) (*Unpacked, *Document) {
	t.Helper()
	out, err := Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	u, err := Unpack(out)
	if err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	doc, err := DecodeDocument(u.Data)
	if err != nil {
		t.Fatal(err)
	}
	return u, doc
}

func TestRenderPowerShellIsStaticCodePlusOneDataLine(t *testing.T) {
	g := NewWithT(t)
	out, err := Render(fullInput(FormatPowerShell))
	g.Expect(err).NotTo(HaveOccurred())
	header, rest, _ := strings.Cut(string(out), "\n")
	dataLine, body, _ := strings.Cut(rest, "\n")
	g.Expect(header).To(Equal("#ps1_sysnative"))
	g.Expect(dataLine).To(MatchRegexp(`^\$CapwinData = '[A-Za-z0-9+/=]+'$`))
	g.Expect(body).To(Equal(bootstrapScript), "the code after the data line is the static file, byte for byte")
}

func TestRenderPowerShellDocument(t *testing.T) {
	g := NewWithT(t)
	u, doc := render(t, fullInput(FormatPowerShell))
	g.Expect(u.CloudConfig).To(BeNil())
	g.Expect(doc.Mode).To(Equal(ModeStandalone))
	g.Expect(doc.MinimumBuild).To(Equal(20348))
	g.Expect(doc.Paths.Sentinel).To(Equal(`C:\run\cluster-api\bootstrap-success.complete`))
	g.Expect(doc.Status.GuestinfoKey).To(Equal("guestinfo.capwin.bootstrap.status"))
	g.Expect(doc.Status.MaxBytes).To(Equal(1024))
	g.Expect(doc.Features).To(Equal([]string{"Containers", "Hyper-V"}))
	g.Expect(doc.Firewall).To(ConsistOf(
		FirewallRule{Name: "capwin-kubelet", Protocol: "TCP", Port: 10250},
		FirewallRule{Name: "capwin-vxlan", Protocol: "UDP", Port: 4789}))
	g.Expect(doc.Proxy).To(Equal(&DocProxy{HTTPProxy: "http://proxy:3128", HTTPSProxy: "http://proxy:3128", NoProxy: "10.0.0.0/8,.svc"}))
	g.Expect(doc.Time).To(Equal(&DocTime{Timezone: "UTC", NTPServers: []string{"time.windows.com"}}))
	g.Expect(doc.Users).To(HaveLen(1))
	g.Expect(doc.AdminKeys).To(Equal([]string{"ssh-ed25519 AAAA capi@example"}))
	g.Expect(doc.Defender.Processes).To(ContainElements("containerd.exe", "kubelet.exe"))
	g.Expect(doc.Downloads).To(Equal([]DocDownload{
		{URL: "https://dl.k8s.io/v1.36.3/bin/windows/amd64/kubelet.exe", SHA256: strings.Repeat("b", 64), Path: `C:\k\kubelet.exe`, Service: "kubelet"},
		{URL: "https://dl.k8s.io/v1.36.3/bin/windows/amd64/kubeadm.exe", SHA256: strings.Repeat("c", 64), Path: `C:\k\kubeadm.exe`},
	}))
	g.Expect(doc.Containerd.Register).To(BeFalse())

	// Every file in standalone mode, decoded to its exact bytes, then capwin's kubelet patch.
	g.Expect(doc.Files).To(HaveLen(6))
	want := []string{"plain 'quoted' $(not code)\n", "decoded\n", "zipped\n", "zipped\n", "10.0.0.5 registry\n"}
	for i, w := range want {
		g.Expect(decode(t, doc.Files[i].Content)).To(Equal(w), doc.Files[i].Path)
	}
	g.Expect(doc.Files[5].Path).To(Equal(KubeletPatchPath))
	g.Expect(doc.Files[4].Append).To(BeTrue())

	// User commands live in their own files, with a BOM so PowerShell 5.1 reads UTF-8.
	g.Expect(doc.PreJoin).To(HaveLen(1))
	g.Expect(doc.PreJoin[0].Path).To(Equal(`C:\var\lib\capwin\prejoin-00.ps1`))
	g.Expect(decode(t, doc.PreJoin[0].Content)).To(Equal("\uFEFFWrite-Output 'before' # ünïcode"))
	g.Expect(doc.PostJoin[0].Path).To(Equal(`C:\var\lib\capwin\postjoin-00.ps1`))
}

func TestRenderJoinConfiguration(t *testing.T) {
	g := NewWithT(t)
	_, doc := render(t, fullInput(FormatPowerShell))
	var cfg upstreamv1beta4.JoinConfiguration
	g.Expect(yaml.UnmarshalStrict([]byte(doc.Join.Config), &cfg)).To(Succeed())
	g.Expect(cfg.APIVersion).To(Equal("kubeadm.k8s.io/v1beta4"))
	g.Expect(cfg.Kind).To(Equal("JoinConfiguration"))
	g.Expect(cfg.Discovery.BootstrapToken.Token).To(Equal("abcdef.0123456789abcdef"))
	g.Expect(cfg.Discovery.BootstrapToken.APIServerEndpoint).To(Equal("10.0.0.10:6443"))
	g.Expect(cfg.Discovery.BootstrapToken.CACertHashes).To(HaveLen(1))
	g.Expect(cfg.Discovery.BootstrapToken.UnsafeSkipCAVerification).To(BeFalse())
	g.Expect(cfg.NodeRegistration.Name).To(Equal("win-a1"))
	g.Expect(cfg.NodeRegistration.CRISocket).To(Equal("npipe:////./pipe/containerd-containerd"))
	g.Expect(cfg.NodeRegistration.Taints).To(HaveLen(2))
	g.Expect(cfg.NodeRegistration.IgnorePreflightErrors).To(Equal([]string{"SystemVerification"}))
	g.Expect(doc.Join.ConfigPath).To(Equal(`C:\var\lib\capwin\kubeadm-join-config.yaml`))
	g.Expect(doc.Join.Kubeadm).To(Equal(`C:\k\kubeadm.exe`))
}

func TestRenderCloudConfig(t *testing.T) {
	g := NewWithT(t)
	out, err := Render(fullInput(FormatCloudConfig))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(HavePrefix("Content-Type: multipart/mixed; boundary="))
	g.Expect(string(out)).To(ContainSubstring(`Content-Type: text/x-shellscript; charset="utf-8"`))
	g.Expect(string(out)).To(ContainSubstring(`filename="capwin-bootstrap.ps1"`))

	u, doc := render(t, fullInput(FormatCloudConfig))
	g.Expect(doc.Mode).To(Equal(ModeCloudbaseInit))
	g.Expect(string(u.Script)).To(HaveSuffix(bootstrapScript))
	// cloudbase-init creates the users and writes plain files; the append file, the time zone,
	// the time service and administrators' keys are left to the script.
	g.Expect(doc.Users).To(BeNil())
	g.Expect(doc.Time).To(Equal(&DocTime{Timezone: "UTC", NTPServers: []string{"time.windows.com"}}))
	g.Expect(doc.AdminKeys).To(Equal([]string{"ssh-ed25519 AAAA capi@example"}))
	g.Expect(doc.Files).To(HaveLen(1))
	g.Expect(doc.Files[0].Append).To(BeTrue())

	g.Expect(string(u.CloudConfig)).To(HavePrefix("#cloud-config\n"))
	var cc cloudConfigDoc
	g.Expect(yaml.UnmarshalStrict(bytes.TrimPrefix(u.CloudConfig, []byte("#cloud-config\n")), &cc)).To(Succeed())
	g.Expect(cc.Users).To(Equal([]ccUser{{Name: "capi", Groups: []string{"Administrators"}, SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA capi@example"}}}))
	g.Expect(cc.WriteFiles).To(HaveLen(5))
	g.Expect(cc.WriteFiles[4].Path).To(Equal(KubeletPatchPath))
	for _, f := range cc.WriteFiles {
		g.Expect(f.Encoding).To(Equal("b64"))
	}
	g.Expect(decode(t, cc.WriteFiles[2].Content)).To(Equal("zipped\n"))
}

// TestRenderMinimal: cloudbase-init only writes capwin's kubelet patch; the script does the rest.
func TestRenderMinimal(t *testing.T) {
	g := NewWithT(t)
	u, doc := render(t, minimalInput(FormatCloudConfig))
	var cc cloudConfigDoc
	g.Expect(yaml.UnmarshalStrict(bytes.TrimPrefix(u.CloudConfig, []byte("#cloud-config\n")), &cc)).To(Succeed())
	g.Expect(cc.Users).To(BeEmpty())
	g.Expect(cc.WriteFiles).To(HaveLen(1))
	g.Expect(cc.WriteFiles[0].Path).To(Equal(KubeletPatchPath))
	g.Expect(doc.Features).To(Equal([]string{"Containers"}))
	g.Expect(doc.Proxy).To(BeNil())
	g.Expect(doc.Downloads).To(BeEmpty())
	g.Expect(doc.Files).To(BeEmpty())
}

func TestRenderIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	for _, f := range []Format{FormatCloudConfig, FormatPowerShell} {
		a, err := Render(fullInput(f))
		g.Expect(err).NotTo(HaveOccurred())
		b, err := Render(fullInput(f))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(a).To(Equal(b))
	}
}

func TestRenderRejects(t *testing.T) {
	cases := map[string]struct {
		mutate func(*Input)
		want   string
	}{
		"no token":           {func(in *Input) { in.Join.Token = "" }, "join.token"},
		"no endpoint":        {func(in *Input) { in.Join.APIServerEndpoint = "" }, "join.apiServerEndpoint"},
		"no CA hash":         {func(in *Input) { in.Join.CACertHashes = nil }, "join.caCertHashes"},
		"no version":         {func(in *Input) { in.KubernetesVersion = "" }, "kubernetesVersion"},
		"bad format":         {func(in *Input) { in.Format = "ignition" }, `unknown format "ignition"`},
		"bad socket":         {func(in *Input) { in.Join.CRISocket = "unix:///run/containerd.sock" }, "want npipe:////./pipe/<name>"},
		"bad base64":         {func(in *Input) { in.Files = []File{{Path: `C:\a`, Encoding: "base64", Content: "!!"}} }, "not valid base64"},
		"bad gzip":           {func(in *Input) { in.Files = []File{{Path: `C:\a`, Encoding: "gzip", Content: "plain"}} }, "not gzip"},
		"unknown encoding":   {func(in *Input) { in.Files = []File{{Path: `C:\a`, Encoding: "zstd", Content: "x"}} }, `unknown encoding "zstd"`},
		"empty command":      {func(in *Input) { in.PreJoinCommands = []string{" \n"} }, "prejoin command 0 is empty"},
		"invalid UTF-8":      {func(in *Input) { in.Users = []User{{Name: "\xef"}} }, `input.Users[0].Name is not valid UTF-8`},
		"control character":  {func(in *Input) { in.Timezone = "UTC\x01" }, `timezone contains the non-printable character U+0001`},
		"quote in directory": {func(in *Input) { in.Binaries.Directory = `C:\k"` }, "quote"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			in := minimalInput(FormatPowerShell)
			tc.mutate(&in)
			_, err := Render(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestUnpackGzip(t *testing.T) {
	g := NewWithT(t)
	out, err := Render(fullInput(FormatCloudConfig))
	g.Expect(err).NotTo(HaveOccurred())
	u, err := Unpack(gzipBytes(t, out))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.CloudConfig).NotTo(BeNil())
	_, err = Unpack([]byte("#cloud-config\n{}"))
	g.Expect(err).To(MatchError(ContainSubstring("no $CapwinData line")))
}
