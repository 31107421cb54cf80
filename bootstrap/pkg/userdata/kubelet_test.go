package userdata

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/pelletier/go-toml/v2"
)

func TestKubeletArgs(t *testing.T) {
	g := NewWithT(t)
	in := fullInput(FormatPowerShell)
	args := kubeletArgs(&in)
	g.Expect(args).To(ContainElements(
		"--windows-service=true",
		"--hostname-override=win-a1",
		"--node-labels=app=iis,node.kubernetes.io/windows-build=10.0.20348,zone=b",
		"--max-pods=60",
	))
	// Deprecated flags: their settings are in the kubelet configuration patch (windowsKubeletFields).
	for _, a := range args {
		g.Expect(a).NotTo(Or(HavePrefix("--cgroups-per-qos"), HavePrefix("--enforce-node-allocatable"), HavePrefix("--resolv-conf"),
			HavePrefix("--container-runtime-endpoint"), HavePrefix("--register-with-taints")))
	}
	// An extra arg replaces capwin's default in place instead of adding a second flag.
	g.Expect(args).To(ContainElement("--windows-priorityclass=HIGH_PRIORITY_CLASS"))
	g.Expect(args).NotTo(ContainElement("--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS"))
	g.Expect(args[len(args)-1]).To(Equal("--max-pods=60"))
}

// removedKubeletFlags are kubelet flags that later kubelets no longer register: the kubelet
// refuses to start with an unknown flag, so capwin must never pass one.
var removedKubeletFlags = []string{
	// Removed in v1.35 (kubeadm dropped it from kubeadm-flags.env on the upgrade to 1.35; the
	// v1.36.3 kubelet's cmd/kubelet/app/options has no such flag). containerd's sandbox_image
	// names the pause image.
	"pod-infra-container-image",
	// klog's flags but -v and -vmodule are gone since v1.26 (kubernetes#112120: "Legacy klog
	// flags are no longer available"); the v1.36.3 kubelet registers only v, vmodule and
	// log-flush-frequency from k8s.io/component-base/logs.
	"log-file", "logtostderr", "log-dir", "alsologtostderr",
}

func TestKubeletArgsHaveNoRemovedFlags(t *testing.T) {
	g := NewWithT(t)
	for _, in := range []Input{fullInput(FormatPowerShell), minimalInput(FormatCloudConfig)} {
		for _, a := range kubeletArgs(&in) {
			for _, removed := range removedKubeletFlags {
				g.Expect(a).NotTo(HavePrefix("--"+removed+"="), "a v1.35+ kubelet does not start with --%s", removed)
			}
		}
	}
}

func TestKubeletArgsWithoutTaintsOrLabels(t *testing.T) {
	g := NewWithT(t)
	in := minimalInput(FormatPowerShell)
	in.Taints = nil
	for _, a := range kubeletArgs(&in) {
		g.Expect(a).NotTo(Or(HavePrefix("--register-with-taints"), HavePrefix("--node-labels"), HavePrefix("--hostname-override")))
	}
}

func TestContainerdConfig(t *testing.T) {
	for _, hyperV := range []bool{false, true} {
		g := NewWithT(t)
		in := minimalInput(FormatPowerShell)
		in.HyperVIsolation = hyperV
		in.PauseImage = "example.com/pause:1"
		out, err := renderContainerdConfig(&in)
		g.Expect(err).NotTo(HaveOccurred())
		var cfg containerdConfig
		g.Expect(toml.Unmarshal([]byte(out), &cfg)).To(Succeed())
		g.Expect(cfg.Version).To(Equal(2))
		g.Expect(cfg.GRPC.Address).To(Equal(`\\.\pipe\containerd-containerd`))
		cri := cfg.Plugins.CRI
		g.Expect(cri.SandboxImage).To(Equal("example.com/pause:1"))
		g.Expect(cri.Containerd.DefaultRuntimeName).To(Equal(RuntimeProcess))
		g.Expect(cri.CNI).To(Equal(criCNI{BinDir: "C:/opt/cni/bin", ConfDir: "C:/etc/cni/net.d"}))
		g.Expect(cri.Containerd.Runtimes).To(HaveKey(RuntimeProcess))
		if hyperV {
			g.Expect(cri.Containerd.Runtimes[RuntimeHypervisor].Options).To(Equal(&runhcsOptions{SandboxIsolation: 1}))
		} else {
			g.Expect(cri.Containerd.Runtimes).NotTo(HaveKey(RuntimeHypervisor))
		}
		g.Expect(out).To(ContainSubstring(`[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.runhcs-wcow-process]`))
	}
}

func TestFirewallFollowsCNI(t *testing.T) {
	g := NewWithT(t)
	g.Expect(firewall(CNI{Plugin: "none"})).To(HaveLen(1))
	g.Expect(firewall(CNI{Plugin: "calico", VXLANPort: 4790})).To(ContainElement(FirewallRule{Name: "capwin-vxlan", Protocol: "UDP", Port: 4790}))
}
