package badinput_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/internal/test/envtest"
)

// covered names, for each resource with an admission webhook, the test that stores objects
// breaking its rules and checks that the reconcilers refuse them.
var covered = map[string]string{
	"vcentermachines":         "TestMachineRefused/vcenter",
	"vcentermachinetemplates": "TestMachineRefused/vcenter, TestTemplateWithProviderIDRefused",
	"vcenterclusters":         "TestClusterRefused/vcenter",
	"vcenterclustertemplates": "TestClusterRefused/vcenter (CAPI copies the template into a VCenterCluster)",
	"hypervmachines":          "TestMachineRefused/hyperv",
	"hypervmachinetemplates":  "TestMachineRefused/hyperv, TestTemplateWithProviderIDRefused",
	"hypervclusters":          "TestClusterRefused/hyperv",
	"hypervclustertemplates":  "TestClusterRefused/hyperv (CAPI copies the template into a HyperVCluster)",
	"windowsconfigs":          "bootstrap/reconcilers/windowsconfig TestConfigTheWebhookWouldRejectIsRefused",
	"windowsconfigtemplates":  "bootstrap/reconcilers/windowsconfig TestConfigTheWebhookWouldRejectIsRefused (CAPI copies the template into a WindowsConfig)",
}

// TestEveryWebhookIsCovered fails when a webhook is added for a resource this suite does not
// cover: the reconcilers must refuse what it rejects too (see internal/admit).
func TestEveryWebhookIsCovered(t *testing.T) {
	g := NewWithT(t)
	seen := map[string]bool{}
	for _, provider := range []string{"infrastructure", "bootstrap"} {
		raw, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), provider, "config", "webhook", "manifests.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			var cfg admissionregistrationv1.ValidatingWebhookConfiguration
			g.Expect(yaml.Unmarshal([]byte(doc), &cfg)).To(Succeed())
			if cfg.Kind != "ValidatingWebhookConfiguration" {
				continue // defaulting webhooks: their defaults are applied by the same create path
			}
			for _, w := range cfg.Webhooks {
				for _, rule := range w.Rules {
					for _, r := range rule.Resources {
						g.Expect(covered).To(HaveKey(r), "webhook %s: add rows for %s to this suite", w.Name, r)
						seen[r] = true
					}
				}
			}
		}
	}
	g.Expect(seen).To(HaveLen(len(covered)), "every covered resource has a webhook")
}
