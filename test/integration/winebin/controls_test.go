package winebin

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// The negative controls: each breaks one input after admission (as a capwin bug would) and shows
// that the stage's checks then fail, with the program's own message.

// TestControlRemovedKubeletFlag: a flag the newest kubelet no longer has (removed in v1.35) on
// the service's command line stops that kubelet at flag parsing, so kubeletPassed would fail.
func TestControlRemovedKubeletFlag(t *testing.T) {
	out := kubeletWithFlag(t, "pod-infra-container-image", "registry.k8s.io/pause:3.10")
	wantRefused(t, out, "unknown flag: --pod-infra-container-image")
}

// TestControlDeprecatedKubeletFlag: a deprecated flag (one capwin passed before its value moved
// into the kubelet configuration) makes the kubelet warn, which kubeletPassed fails on.
func TestControlDeprecatedKubeletFlag(t *testing.T) {
	out := kubeletWithFlag(t, "cgroups-per-qos", "false")
	wantRefused(t, out, "Flag --cgroups-per-qos has been deprecated")
}

// kubeletWithFlag runs the newest kubelet of the stage with one more flag than admission allows.
func kubeletWithFlag(t *testing.T, name, value string) Result {
	t.Helper()
	c := newCluster(t)
	versions := Versions(t, "kubernetes", "kubelet.exe")
	version := versions[len(versions)-1]
	spec := c.spec(t, matrix[0])
	spec.NodeRegistration.KubeletExtraArgs = append(spec.NodeRegistration.KubeletExtraArgs, bootstrapv1.Arg{Name: name, Value: value})
	doc := c.render(t, spec, version)
	p := NewPrefix(t)
	c.lay(t, p, doc)
	kubeletStart(t, p, Exe(t, "kubernetes", version, "kubeadm.exe"), doc, version)
	writeKubeconfig(t, p, c)
	return run(t, p, Exe(t, "kubernetes", version, "kubelet.exe"), consoleArgs(doc)...)
}

// TestControlBadKubeletConfiguration: a configuration value the kubelet refuses, applied by
// kubeadm's patch, stops the kubelet at its configuration check.
func TestControlBadKubeletConfiguration(t *testing.T) {
	c := newCluster(t)
	versions := Versions(t, "kubernetes", "kubelet.exe")
	version := versions[len(versions)-1]
	spec := c.spec(t, matrix[0])
	spec.KubeletConfiguration = &runtime.RawExtension{Raw: []byte(`{"imageGCHighThresholdPercent": 40, "imageGCLowThresholdPercent": 60}`)}
	doc := c.render(t, spec, version)
	p := NewPrefix(t)
	c.lay(t, p, doc)
	kubeletStart(t, p, Exe(t, "kubernetes", version, "kubeadm.exe"), doc, version)
	writeKubeconfig(t, p, c)
	out := run(t, p, Exe(t, "kubernetes", version, "kubelet.exe"), consoleArgs(doc)...)
	wantRefused(t, out, "imageGCLowThresholdPercent")
}

// TestControlBadJoinConfiguration: kubeadm refuses a JoinConfiguration with a field it lacks.
func TestControlBadJoinConfiguration(t *testing.T) {
	c := newCluster(t)
	versions := Versions(t, "kubernetes", "kubeadm.exe")
	version := versions[len(versions)-1]
	doc := c.render(t, c.spec(t, matrix[0]), version)
	doc.Join.Config = strings.Replace(doc.Join.Config, "nodeRegistration:", "nodeRegistration:\n  kubeletExtraArg: {}", 1)
	p := NewPrefix(t)
	c.lay(t, p, doc)
	out := run(t, p, Exe(t, "kubernetes", version, "kubeadm.exe"), "config", "validate", "--config", doc.Join.ConfigPath)
	wantRefused(t, out, "kubeletExtraArg")
}

// TestControlBadTOML: containerd refuses a config.toml that is not TOML.
func TestControlBadTOML(t *testing.T) {
	releases := Versions(t, "containerd", "containerd.exe") // first: it skips the test outside the stage
	c := newCluster(t)
	doc := c.render(t, c.spec(t, matrix[0]), "v1.36.3")
	doc.Containerd.Config = strings.Replace(doc.Containerd.Config, "root = ", "root = = ", 1)
	p := NewPrefix(t)
	c.lay(t, p, doc)
	for _, release := range releases {
		out := run(t, p, Exe(t, "containerd", release, "containerd.exe"), "--config", doc.Containerd.ConfigPath, "config", "dump")
		wantRefused(t, out, "toml")
	}
}

// wantRefused: the program exited with an error that names what is wrong.
func wantRefused(t *testing.T, out Result, want string) {
	t.Helper()
	if out.ExitCode == 0 || !strings.Contains(out.Output(), want) {
		t.Fatalf("want a refusal naming %q, got exit code %d:\n%s", want, out.ExitCode, tail(out.Output()))
	}
}

// TestControlBadNetConf: flanneld refuses a net-conf.json whose pod network is not a network.
func TestControlBadNetConf(t *testing.T) {
	flags := scriptFlags(t, "../../../templates/addons/flannel/start-flanneld.ps1", `(?m)^& \$flanneld (.*)$`)
	versions := Versions(t, "flannel", "flanneld.exe")
	p := NewPrefix(t)
	writeFile(t, p, podEnv["$netConf"], `{"Network": "10.244.0.0/33", "Backend": {"Type": "vxlan", "VNI": 4096}}`)
	serviceAccount(t, p, newCluster(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := p.Exec(ctx, Program{Exe: Exe(t, "flannel", versions[len(versions)-1], "flanneld.exe"), Args: flags, Env: inCluster,
		Until: "for node controller to sync"})
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, out, "error parsing subnet config")
}
