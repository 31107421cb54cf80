package userdata

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/pelletier/go-toml/v2"

	"github.com/capwin/capwin/bootstrap/pkg/kubeletflags"
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

// TestKubeletArgsHaveNoRemovedFlags: every flag capwin puts on the kubelet's command line is one
// that the Windows kubelet of each supported minor has (generated from the kubelet's own code):
// a kubelet refuses to start with an unknown flag, e.g. --pod-infra-container-image since v1.35
// or klog's --log-file since v1.26.
func TestKubeletArgsHaveNoRemovedFlags(t *testing.T) {
	g := NewWithT(t)
	for _, in := range []Input{fullInput(FormatPowerShell), minimalInput(FormatCloudConfig)} {
		for _, a := range kubeletArgs(&in) {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			for _, minor := range kubeletflags.Minors() {
				g.Expect(kubeletflags.Has(minor, name)).To(BeTrue(), "the %s kubelet does not start with --%s", minor, name)
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
