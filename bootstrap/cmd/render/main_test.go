package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

const caFile = "../../reconcilers/windowsconfig/testdata/ca.crt"

func TestRenderExample(t *testing.T) {
	g := NewWithT(t)
	pin, err := os.ReadFile("../../reconcilers/windowsconfig/testdata/ca.pin")
	g.Expect(err).NotTo(HaveOccurred())
	var out bytes.Buffer
	g.Expect(run([]string{"-f", "../../../docs/examples/windowsconfig.yaml", "--api-server", "10.0.0.10:6443",
		"--ca-file", caFile, "--node-name", "win-x"}, &out)).To(Succeed())
	u, err := userdata.Unpack(out.Bytes())
	g.Expect(err).NotTo(HaveOccurred())
	doc, err := userdata.DecodeDocument(u.Data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc.Time.Timezone).To(Equal("UTC"))
	g.Expect(doc.NodeName).To(Equal("win-x"))
	g.Expect(doc.Join.Config).To(ContainSubstring(strings.TrimSpace(string(pin))))
	g.Expect(doc.Kubelet.Args).To(ContainElement("--v=2"))
	var cc struct {
		WriteFiles []struct{ Path, Content string } `json:"write_files"`
	}
	g.Expect(yaml.Unmarshal(u.CloudConfig, &cc)).To(Succeed())
	patch := map[string]string{}
	for _, f := range cc.WriteFiles {
		b, err := base64.StdEncoding.DecodeString(f.Content)
		g.Expect(err).NotTo(HaveOccurred())
		patch[f.Path] = string(b)
	}
	g.Expect(patch).To(HaveKeyWithValue(userdata.KubeletPatchPath, ContainSubstring(`"registerWithTaints":[{"effect":"NoSchedule","key":"os","value":"windows"}]`)))
	g.Expect(doc.Join.Config).To(ContainSubstring(`directory: C:\var\lib\capwin\kubeadm-patches`))
	g.Expect(string(u.CloudConfig)).To(ContainSubstring(`path: C:\var\lib\capwin\kubeadm-patches\kubeletconfiguration+merge.json`))
}

func TestRenderPowerShellGzip(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(run([]string{"-f", "../../../docs/examples/windowsconfig.yaml", "--api-server", "10.0.0.10:6443",
		"--ca-hash", "sha256:" + strings.Repeat("0", 64), "--format", "powershell", "--gzip"}, &out)).To(Succeed())
	r, err := gzip.NewReader(&out)
	g.Expect(err).NotTo(HaveOccurred())
	script, err := io.ReadAll(r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(script)).To(HavePrefix("#ps1_sysnative\n"))
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: WindowsConfig\nspec:\n  files:\n  - path: relative.txt\n    content: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	iana := writeConfig(t, dir, "iana.yaml", "timezone: Europe/Berlin\n")
	vni := writeConfig(t, dir, "vni.yaml", "cni:\n    plugin: flannel\n    vxlanVNI: 4097\n")
	kubelet := writeConfig(t, dir, "kubelet.yaml", "kubeletConfiguration:\n    maxPods: 60\n    fooBar: 1\n")
	podInfra := writeConfig(t, dir, "pod-infra.yaml", "nodeRegistration:\n    kubeletExtraArgs:\n    - name: pod-infra-container-image\n      value: registry.k8s.io/pause:3.10\n")
	cases := map[string]struct {
		args []string
		want string
	}{
		// The CRD's pattern and CEL rules, as the API server applies them (the webhook alone
		// accepted both).
		"IANA time zone": {[]string{"-f", iana, "--api-server", "a:1", "--ca-file", caFile}, `spec.timezone: Invalid value: "Europe/Berlin": spec.timezone in body should match`},
		"CEL rule":       {[]string{"-f", vni, "--api-server", "a:1", "--ca-file", caFile}, "spec.cni: Invalid value: flannel on Windows requires vxlanVNI 4096"},
		"kubelet field":  {[]string{"-f", kubelet, "--api-server", "a:1", "--ca-file", caFile}, "spec.kubeletConfiguration.fooBar: Forbidden: unknown field"},
		// Admitted (the v1.31 to v1.34 kubelets have it), but the Machine's kubelet would not start.
		"flag the kubelet lacks": {[]string{"-f", podInfra, "--api-server", "a:1", "--ca-file", caFile, "--kubernetes-version", "v1.35.4"},
			"the v1.35 kubelet has no flag --pod-infra-container-image (the v1.34 kubelet had it)"},
		"no file":     {[]string{"--api-server", "a:1"}, "-f and --api-server are required"},
		"no CA":       {[]string{"-f", other, "--api-server", "a:1"}, "neither WindowsConfig nor WindowsConfigTemplate"},
		"invalid":     {[]string{"-f", bad, "--api-server", "a:1", "--ca-file", caFile}, "spec.files[0].path"},
		"missing pin": {[]string{"-f", "../../../docs/examples/windowsconfig.yaml", "--api-server", "a:1"}, "one of --ca-hash or --ca-file is required"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(run(tc.args, io.Discard)).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// writeConfig writes a WindowsConfig whose spec is the given YAML (indented by two spaces).
func writeConfig(t *testing.T, dir, name, spec string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	body := "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: WindowsConfig\nmetadata:\n  name: w\nspec:\n  " + spec
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenderUndefaulted: a config that never saw the defaulting webhook (every defaulted field
// left out) renders exactly as the one the webhook would have stored.
func TestRenderUndefaulted(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	bare := writeConfig(t, dir, "bare.yaml", "{}\n")
	full := writeConfig(t, dir, "full.yaml", `format: cloud-config
  defenderExclusions: true
  nodeRegistration:
    criSocket: npipe:////./pipe/containerd-containerd
  containerd:
    pauseImage: registry.k8s.io/pause:3.10
  cni:
    plugin: calico
    vxlanVNI: 4096
    vxlanPort: 4789
  binaries:
    source: Prebaked
    directory: C:\k
`)
	render := func(path string) string {
		var out bytes.Buffer
		g.Expect(run([]string{"-f", path, "--api-server", "10.0.0.10:6443", "--ca-file", caFile, "--node-name", "win-x"}, &out)).To(Succeed())
		return out.String()
	}
	g.Expect(render(bare)).To(Equal(render(full)))
}

// TestHelp: -h, --help and help print both forms of render on stdout and end in flag.ErrHelp,
// which main turns into exit status 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"-f", "x.yaml", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			g := NewWithT(t)
			var out bytes.Buffer
			err := run(args, &out)
			g.Expect(err).To(MatchError(flag.ErrHelp))
			g.Expect(out.String()).To(ContainSubstring("render -f FILE --api-server HOST:PORT (--ca-file FILE | --ca-hash sha256:...) [flags]"))
			g.Expect(out.String()).To(ContainSubstring("render diagnostics [--kubeconfig FILE] [-n NAMESPACE] [--events N] MACHINE"))
			g.Expect(out.String()).To(ContainSubstring("render version"))
			g.Expect(out.String()).To(ContainSubstring("-kubernetes-version string"))
			g.Expect(exitStatus(err, io.Discard)).To(Equal(0))
		})
	}
}

func TestExitStatus(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	g.Expect(exitStatus(nil, &stderr)).To(Equal(0))
	g.Expect(exitStatus(flag.ErrHelp, &stderr)).To(Equal(0))
	g.Expect(stderr.String()).To(BeEmpty())

	g.Expect(exitStatus(errors.New("boom"), &stderr)).To(Equal(1))
	g.Expect(stderr.String()).To(Equal("render: boom\n"))

	// No arguments: the usage, then the error, on stderr.
	stderr.Reset()
	var stdout bytes.Buffer
	g.Expect(exitStatus(run(nil, &stdout), &stderr)).To(Equal(1))
	g.Expect(stdout.String()).To(BeEmpty())
	g.Expect(stderr.String()).To(ContainSubstring("render diagnostics [--kubeconfig FILE]"))
	g.Expect(stderr.String()).To(HaveSuffix("render: no arguments: give the preview's flags or a command\n"))

	// A flag error says where the usage is; a stray argument too.
	g.Expect(run([]string{"--nope"}, &stdout)).To(MatchError("flag provided but not defined: -nope (render -h for usage)"))
	g.Expect(run([]string{"diagnostic", "m"}, &stdout)).To(MatchError(ContainSubstring(`unexpected argument "diagnostic"`)))
	g.Expect(stdout.String()).To(BeEmpty())
}

func TestVersion(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(run([]string{"version"}, &out)).To(Succeed())
	g.Expect(out.String()).To(HavePrefix("render dev")) // a test binary records no commit
	g.Expect(run([]string{"version", "x"}, &out)).To(MatchError(ContainSubstring("version takes no arguments")))

	old := version
	t.Cleanup(func() { version = old })
	version = "v0.1.0" // as -ldflags "-X main.version=v0.1.0" sets it
	out.Reset()
	g.Expect(run([]string{"version"}, &out)).To(Succeed())
	g.Expect(out.String()).To(HavePrefix("render v0.1.0"))

	rev := debug.BuildSetting{Key: "vcs.revision", Value: "208b0e44d06216fabcf5e22f4380cfb088e1d9ab"}
	g.Expect(formatVersion("v0.1.0", nil)).To(Equal("v0.1.0"))
	g.Expect(formatVersion("v0.1.0", &debug.BuildInfo{})).To(Equal("v0.1.0"))
	g.Expect(formatVersion("v0.1.0", &debug.BuildInfo{Settings: []debug.BuildSetting{rev}})).
		To(Equal("v0.1.0 (commit 208b0e44d06216fabcf5e22f4380cfb088e1d9ab)"))
	g.Expect(formatVersion("dev", &debug.BuildInfo{Settings: []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "true"}}})).
		To(Equal("dev (commit 208b0e44d06216fabcf5e22f4380cfb088e1d9ab, modified)"))
}
