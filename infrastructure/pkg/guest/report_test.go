package guest

import (
	"os"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
)

// TestBootstrapStepsMatchTheScript keeps the step list in line with bootstrap.ps1's $Steps table.
func TestBootstrapStepsMatchTheScript(t *testing.T) {
	g := NewWithT(t)
	script, err := os.ReadFile("../../../bootstrap/pkg/userdata/ps/bootstrap.ps1")
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
