package kubeletflags

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
)

// TestEverySupportedMinorHasASet: docs/compatibility.md's Windows node range, v1.31 to v1.37.
func TestEverySupportedMinorHasASet(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Minors()).To(Equal([]string{"v1.31", "v1.32", "v1.33", "v1.34", "v1.35", "v1.36", "v1.37"}))
	g.Expect(Range()).To(Equal("v1.31 to v1.37"))
	for _, m := range Minors() {
		g.Expect(Supported(m+".0")).To(BeTrue(), m)
		g.Expect(len(sets[mustMinor(t, m)])).To(BeNumerically(">", 100), "%s: a kubelet has well over 100 flags", m)
		for _, name := range []string{"max-pods", "windows-service", "windows-priorityclass", "config", "v"} {
			g.Expect(Has(m, name)).To(BeTrue(), "the %s Windows kubelet has --%s", m, name)
		}
	}
}

func TestPodInfraContainerImageWentAwayInV135(t *testing.T) {
	g := NewWithT(t)
	for _, v := range []string{"v1.31.13", "v1.34.4", "v1.34"} {
		g.Expect(Has(v, "pod-infra-container-image")).To(BeTrue(), v)
		g.Expect(Refusal(v, "pod-infra-container-image")).To(BeEmpty(), v)
	}
	for _, m := range []int{35, 36, 37} {
		g.Expect(Refusal(fmt.Sprintf("v1.%d.1", m), "pod-infra-container-image")).To(Equal(fmt.Sprintf(
			"the v1.%d kubelet has no flag --pod-infra-container-image (the v1.34 kubelet had it): containerd pulls the pause image of spec.containerd.pauseImage", m)))
	}
	g.Expect(Known("pod-infra-container-image")).To(BeTrue())
	g.Expect(Warnings("pod-infra-container-image")).To(ContainElement(
		"the v1.35 to v1.37 kubelets have no flag --pod-infra-container-image, so a Machine of such a version gets no bootstrap data " +
			"(DataSecretAvailable False, reason KubeletFlagNotSupported): containerd pulls the pause image of spec.containerd.pauseImage"))
}

func TestMadeUpFlagIsUnknown(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Known("pod-infra-image")).To(BeFalse())
	g.Expect(Has("v1.36", "pod-infra-image")).To(BeFalse())
	g.Expect(Refusal("v1.36.3", "pod-infra-image")).To(Equal("the v1.36 kubelet has no flag --pod-infra-image (no kubelet v1.31 to v1.37 has it)"))
	g.Expect(Warnings("pod-infra-image")).To(BeEmpty(), "admission refuses it; no warning on top")
}

// TestDeprecatedFlagWarns with the kubelet's own message; --v, which no kubelet deprecates, and
// which every supported kubelet has, draws no warning.
func TestDeprecatedFlagWarns(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Warnings("max-pods")).To(Equal([]string{"--max-pods is deprecated in the v1.31 to v1.37 kubelets: " +
		`"This parameter should be set via the config file specified by the Kubelet's --config flag. ` +
		`See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information."`}))
	g.Expect(Warnings("register-schedulable")).To(ContainElement(
		`--register-schedulable is deprecated in the v1.31 to v1.33 kubelets: "will be removed in a future version"`))
	g.Expect(Warnings("v")).To(BeEmpty())
}

func TestVersionWithoutASetIsNotJudged(t *testing.T) {
	g := NewWithT(t)
	for _, v := range []string{"v1.30.9", "v1.38.0", "v2.0.0", "latest", ""} {
		g.Expect(Supported(v)).To(BeFalse(), v)
		g.Expect(Refusal(v, "made-up")).To(BeEmpty(), v)
	}
}

// TestWordSeparatorsAreNormalized as the kubelet's flag set does: --max_pods is --max-pods.
func TestWordSeparatorsAreNormalized(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Has("v1.36.3", "max_pods")).To(BeTrue())
	g.Expect(Refusal("v1.36.3", "max_pods")).To(BeEmpty())
}

func TestSpan(t *testing.T) {
	g := NewWithT(t)
	g.Expect(span([]int{31, 32, 33, 35, 37})).To(Equal("v1.31 to v1.33, v1.35, v1.37"))
	g.Expect(kubelets([]int{36})).To(Equal("the v1.36 kubelet"))
}

func mustMinor(t *testing.T, version string) int {
	t.Helper()
	m, ok := parseMinor(version)
	if !ok {
		t.Fatalf("not a version: %q", version)
	}
	return m
}

// TestReplacementsAreForRemovedFlags: each hand-written replacement is for a flag that some
// supported kubelet has and some lacks (a newly generated set may change that).
func TestReplacementsAreForRemovedFlags(t *testing.T) {
	g := NewWithT(t)
	for name := range replacements {
		g.Expect(with(name)).NotTo(BeEmpty(), "no supported kubelet has --%s: drop its replacement", name)
		g.Expect(without(name)).NotTo(BeEmpty(), "every supported kubelet has --%s: drop its replacement", name)
	}
}
