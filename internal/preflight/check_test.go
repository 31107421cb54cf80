package preflight

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestParseBuild(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]int{"ltsc2025": 26100, "LTSC2022": 20348, "2025": 26100, "10.0.26100": 26100,
		"10.0.20348.2700": 20348, "26100": 26100, " ltsc2019 ": 17763} {
		b, err := ParseBuild(in)
		g.Expect(err).NotTo(HaveOccurred(), in)
		g.Expect(b.Number).To(Equal(want), in)
	}
	for _, in := range []string{"", "windows", "11.0.26100", "10.0.x", "-3", "10.0.26100.1.2"} {
		_, err := ParseBuild(in)
		g.Expect(err).To(MatchError(ContainSubstring("give ltsc2022, ltsc2025")), in)
	}
	g.Expect(Build{26100}.String()).To(Equal("10.0.26100 (ltsc2025)"))
	g.Expect(Build{26200}.String()).To(Equal("10.0.26200"))
}

// TestJudge holds the compatibility rules: process isolation needs the node's build, Hyper-V
// isolation runs the node's build and older ones, nothing runs a newer one.
func TestJudge(t *testing.T) {
	g := NewWithT(t)
	target := Build{26100}
	only2022 := Image{Windows: []string{"10.0.20348.2700"}}
	only2025 := Image{Windows: []string{"10.0.26100.1742"}}
	both := Image{Windows: []string{"10.0.20348.2700", "10.0.26100.1742"}, Others: []string{"linux/amd64"}}
	newer := Image{Windows: []string{"10.0.26200.1"}}
	for _, c := range []struct {
		img     Image
		target  Build
		hyperV  bool
		classes []string
		problem string // "" = runs
		fix     string
	}{
		{only2025, target, false, nil, "", ""},
		{both, target, false, nil, "", ""},
		{only2022, target, true, []string{"windows-hyperv"}, "", ""},
		{only2022, target, false, []string{"windows-hyperv"}, "no image for 10.0.26100 (ltsc2025) and process isolation", "runtimeClassName: windows-hyperv"},
		{only2022, target, false, nil, "no image for 10.0.26100 (ltsc2025) and process isolation", "a RuntimeClass with handler runhcs-wcow-hypervisor"},
		{only2025, Build{20348}, false, []string{"windows-hyperv"}, "only for a newer build: no isolation runs a newer image", "publish an image for 10.0.20348 (ltsc2022)"},
		{newer, target, true, []string{"windows-hyperv"}, "Hyper-V isolation runs only images of the node's build or older", "image index with both builds"},
		{Image{Others: []string{"linux/amd64"}}, target, false, nil, "no Windows image in it (it holds linux/amd64)", "use an image built for Windows"},
		{Image{Windows: []string{""}}, target, false, nil, "carry no os.version", "publish an image for 10.0.26100"},
	} {
		problem, fix := judge(c.img, c.target, c.hyperV, c.classes)
		if c.problem == "" {
			g.Expect(problem).To(BeEmpty(), "%+v", c)
			continue
		}
		g.Expect(problem).To(ContainSubstring(c.problem), "%+v", c)
		g.Expect(fix).To(ContainSubstring(c.fix), "%+v", c)
	}
}

func TestIsWindowsAndPinnedBuilds(t *testing.T) {
	g := NewWithT(t)
	term := func(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: exprs}
	}
	required := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	isWin := corev1.NodeSelectorRequirement{Key: osLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"windows"}}
	isLinux := corev1.NodeSelectorRequirement{Key: osLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}
	build2022 := corev1.NodeSelectorRequirement{Key: buildLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"10.0.20348"}}
	for _, c := range []struct {
		name    string
		spec    corev1.PodSpec
		windows bool
		pinned  []string
	}{
		{"os field", corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Windows}}, true, nil},
		{"os field linux wins over a selector", corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Linux}, NodeSelector: map[string]string{osLabel: "windows"}}, false, nil},
		{"nodeSelector", corev1.PodSpec{NodeSelector: map[string]string{osLabel: "windows"}}, true, nil},
		{"nodeSelector linux", corev1.PodSpec{NodeSelector: map[string]string{osLabel: "linux"}}, false, nil},
		{"pinned by nodeSelector", corev1.PodSpec{NodeSelector: map[string]string{buildLabel: "10.0.20348"}}, true, []string{"10.0.20348"}},
		{"affinity", corev1.PodSpec{Affinity: required(term(isWin))}, true, nil},
		{"affinity, one term lets linux in", corev1.PodSpec{Affinity: required(term(isWin), term(isLinux))}, false, nil},
		{"affinity pinned in every term", corev1.PodSpec{Affinity: required(term(isWin, build2022), term(build2022))}, true, []string{"10.0.20348", "10.0.20348"}},
		{"affinity pinned in one term only", corev1.PodSpec{Affinity: required(term(isWin, build2022), term(isWin))}, true, nil},
		{"nothing", corev1.PodSpec{}, false, nil},
	} {
		g.Expect(IsWindows(&c.spec)).To(Equal(c.windows), c.name)
		g.Expect(pinnedBuilds(&c.spec)).To(Equal(c.pinned), c.name)
	}
}
