package winebin

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/semver"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// TestKubeadmAndKubelet: for each Kubernetes version of the stage and each WindowsConfig of the
// matrix, kubeadm validates the JoinConfiguration, writes the kubelet's config.yaml the way join
// does (the cluster's kubelet configuration with capwin's patch applied), and the kubelet starts
// with the service's command line and that file and gets past its flags and configuration
// checks to the container runtime (which Wine cannot give it: gRPC over a named pipe fails).
func TestKubeadmAndKubelet(t *testing.T) {
	c := newCluster(t)
	for _, version := range Versions(t, "kubernetes", "kubelet.exe") {
		for _, cfg := range matrix {
			t.Run(version+"/"+cfg.name, func(t *testing.T) {
				spec := c.spec(t, cfg)
				doc := c.render(t, spec, version)
				p := NewPrefix(t)
				c.lay(t, p, doc)
				kubeadm := Exe(t, "kubernetes", version, "kubeadm.exe")
				run(t, p, kubeadm, "config", "validate", "--config", doc.Join.ConfigPath).mustSucceed(t)
				kubeletStart(t, p, kubeadm, doc, version)
				checkPatched(t, p, doc, spec.KubeletConfiguration)
				writeKubeconfig(t, p, c)
				out := run(t, p, Exe(t, "kubernetes", version, "kubelet.exe"), consoleArgs(doc)...)
				kubeletPassed(t, out, version)
			})
		}
	}
}

// kubeletStart runs kubeadm's kubelet-start phase with the node registration and patches of the
// JoinConfiguration capwin wrote: join writes config.yaml through the same code (the cluster's
// kubelet configuration, then the patches directory).
func kubeletStart(t *testing.T, p *Prefix, kubeadm string, doc *userdata.Document, version string) {
	t.Helper()
	var join map[string]any
	if err := yaml.Unmarshal([]byte(doc.Join.Config), &join); err != nil {
		t.Fatal(err)
	}
	init := map[string]any{
		"apiVersion": join["apiVersion"], "kind": "InitConfiguration",
		"nodeRegistration": join["nodeRegistration"], "patches": join["patches"],
		// kubeadm picks the address of the default route otherwise, and Wine has none to show.
		"localAPIEndpoint": map[string]any{"advertiseAddress": "10.0.0.21"},
	}
	clusterCfg := map[string]any{"apiVersion": join["apiVersion"], "kind": "ClusterConfiguration",
		"kubernetesVersion": version, "controlPlaneEndpoint": apiServer}
	var docs []string
	for _, d := range []map[string]any{init, clusterCfg} {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	path := `C:\capwin-test\init.yaml`
	writeFile(t, p, path, strings.Join(docs, "---\n"))
	out := run(t, p, kubeadm, "init", "phase", "kubelet-start", "--config", path)
	out.mustSucceed(t)
	if _, err := os.Stat(p.Path(kubeletConfigPath)); err != nil {
		t.Fatalf("kubeadm wrote no %s: %v\n%s", kubeletConfigPath, err, out.Output())
	}
}

// checkPatched: config.yaml has capwin's Windows fields and every field of the user's
// kubeletConfiguration, as kubeadm applied the patch.
func checkPatched(t *testing.T, p *Prefix, doc *userdata.Document, user any) {
	t.Helper()
	raw, err := os.ReadFile(p.Path(kubeletConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"containerRuntimeEndpoint": "npipe:////./pipe/containerd-containerd",
		"cgroupsPerQOS":            false,
		"enforceNodeAllocatable":   []any{"none"},
		"resolvConf":               "",
	}
	if b, err := json.Marshal(user); err == nil && string(b) != "null" {
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		for k, v := range fields {
			want[k] = v
		}
	}
	nodeLogQuery(want, doc.KubernetesVersion)
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("config.yaml %s = %#v, want %#v (capwin's patch or the user's kubeletConfiguration was not applied)", k, got[k], v)
		}
	}
	var taints []any
	for _, line := range doc.Kubelet.Args {
		if strings.HasPrefix(line, "--register-with-taints") {
			t.Errorf("the taints are a flag again: %s", line)
		}
	}
	if ts, ok := got["registerWithTaints"].([]any); ok {
		taints = ts
	}
	joinTaints := joinTaints(t, doc)
	if len(taints) != len(joinTaints) {
		t.Errorf("config.yaml registerWithTaints = %v, want the JoinConfiguration's %v", taints, joinTaints)
	}
}

// nodeLogQuery adds what capwin turns on for Node Log Query unless the user set it: the query,
// and the feature gate for a kubelet older than v1.36 (where it is locked on).
func nodeLogQuery(want map[string]any, version string) {
	if _, set := want["enableSystemLogQuery"]; !set {
		want["enableSystemLogQuery"] = true
	}
	if semver.Compare(semver.MajorMinor(version), "v1.36") >= 0 {
		return
	}
	gates := map[string]any{"NodeLogQuery": true}
	if user, ok := want["featureGates"].(map[string]any); ok {
		for k, v := range user {
			gates[k] = v
		}
	}
	want["featureGates"] = gates
}

func joinTaints(t *testing.T, doc *userdata.Document) []any {
	var join struct {
		NodeRegistration struct{ Taints []any } `json:"nodeRegistration"`
	}
	if err := yaml.Unmarshal([]byte(doc.Join.Config), &join); err != nil {
		t.Fatal(err)
	}
	return join.NodeRegistration.Taints
}

// writeKubeconfig writes what kubeadm join leaves after the TLS bootstrap: the cluster CA and a
// kubelet.conf with a client certificate, so the kubelet dials nothing before the runtime. (Before
// kubelet-start, a ca.crt without its key would make kubeadm take the CA for an external one.)
func writeKubeconfig(t *testing.T, p *Prefix, c cluster) {
	t.Helper()
	writeFile(t, p, `C:\etc\kubernetes\pki\ca.crt`, c.caPEM)
	certPEM, keyPEM := c.clientCert(t, "system:node:win-0")
	writeFile(t, p, kubeletClientCert, certPEM+keyPEM)
	writeFile(t, p, `C:\etc\kubernetes\kubelet.conf`, kubeconfig(c.caPEM))
}

// consoleArgs are the kubelet service's command line for a kubelet started from a console: Wine
// has no service control manager to run it as a service (the kubelet would stop at "Service
// controller connect failed" before it opens the runtime).
func consoleArgs(doc *userdata.Document) []string {
	return append(append([]string(nil), doc.Kubelet.Args...), "--windows-service=false")
}

// kubeletPassed: the kubelet parsed its flags and config.yaml, validated them, and stopped only at
// the container runtime.
func kubeletPassed(t *testing.T, out Result, version string) {
	t.Helper()
	text := out.Output()
	t.Logf("the %s kubelet ended (exit code %d) with:\n%s", version, out.ExitCode, lastLines(text, 6))
	// A deprecated flag or a GA feature gate works today and stops the kubelet once removed.
	for _, bad := range []string{"unknown flag", "failed to validate kubelet", "failed to load kubelet config", "invalid configuration",
		"has been deprecated", "setting GA feature gate", "setting deprecated feature gate"} {
		if strings.Contains(text, bad) {
			t.Fatalf("the %s kubelet refused or warned about its configuration (%q):\n%s", version, bad, tail(text))
		}
	}
	if !strings.Contains(text, `"Kubelet version" kubeletVersion="`+version+`"`) || !runtimeStop(text) {
		t.Fatalf("the %s kubelet did not get to the container runtime:\n%s", version, tail(text))
	}
}

// runtimeStop is where Wine stops the kubelet: its check of the CRI connection over the named
// pipe, the first thing it does after its flags, configuration and clients.
func runtimeStop(text string) bool {
	return strings.Contains(text, `"failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint \"npipe:////./pipe/containerd-containerd\"`)
}

func run(t *testing.T, p *Prefix, exe string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := p.Run(ctx, exe, args...)
	if err != nil && !strings.Contains(err.Error(), "did not end") {
		t.Fatal(err)
	}
	return r
}

func (r Result) mustSucceed(t *testing.T) {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("exit code %d:\n%s", r.ExitCode, tail(r.Output()))
	}
}

func writeFile(t testing.TB, p *Prefix, path, content string) {
	t.Helper()
	host := p.Path(path)
	if err := os.MkdirAll(host[:strings.LastIndex(host, "/")], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lastLines are the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// tail is the end of a long output, for a failure message.
func tail(s string) string {
	const keep = 6000
	if len(s) <= keep {
		return s
	}
	return "...\n" + s[len(s)-keep:]
}
