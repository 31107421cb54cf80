package guestos

import (
	"os"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// TestBootstrapStepsMatchTheScript keeps the step list in line with bootstrap.ps1's $Steps table.
func TestBootstrapStepsMatchTheScript(t *testing.T) {
	g := NewWithT(t)
	script, err := os.ReadFile("../../bootstrap/pkg/userdata/ps/bootstrap.ps1")
	g.Expect(err).NotTo(HaveOccurred())
	table := regexp.MustCompile(`(?s)\$Steps = \[ordered\]@\{(.*?)\n\}`).FindSubmatch(script)
	g.Expect(table).NotTo(BeNil())
	var steps []string
	for _, m := range regexp.MustCompile(`(?m)^\s*'(\w+)'\s*=`).FindAllSubmatch(table[1], -1) {
		steps = append(steps, string(m[1]))
	}
	g.Expect(steps).To(Equal(BootstrapSteps))
	g.Expect(StepIndex("join")).To(BeNumerically(">", StepIndex("kubelet")))
	g.Expect(StepIndex("reboot")).To(Equal(-1))
}

func TestNodeName(t *testing.T) {
	NewWithT(t).Expect(NodeName("WIN-MD-0A1B2")).To(Equal("win-md-0a1b2"))
}

func TestParseReport(t *testing.T) {
	g := NewWithT(t)
	r, err := ParseReport(`{"step":"join","state":"Failed","message":"kubeadm join failed","logTail":"` + strings.Repeat("é", 600) + `"}`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.State).To(Equal(ReportFailed))
	g.Expect(len(r.LogTail)).To(BeNumerically("<=", 1024))
	g.Expect(strings.ToValidUTF8(r.LogTail, "?")).To(Equal(r.LogTail), "clipped on a rune boundary")
	for _, bad := range []string{`{"state":"Hacked"}`, `not json`, strings.Repeat("x", MaxReportBytes+1), "{\"state\":\"Running\",\"step\":\"\xff\"}"} {
		_, err := ParseReport(bad)
		g.Expect(err).To(HaveOccurred(), bad[:min(len(bad), 30)])
	}
}
