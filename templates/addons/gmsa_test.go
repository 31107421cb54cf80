package addons

import (
	"testing"

	. "github.com/onsi/gomega"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"

	"github.com/capwin/capwin/addoninstaller/gmsa"
)

// TestGMSA checks the optional gMSA addon: every selection carries it, its ClusterResourceSet
// needs the Cluster label capwin.io/gmsa: "true", and its Job pins the release, the image and
// the SHA-256 of the two upstream files (gmsa.Pinned, checked against the test copy of the tag).
func TestGMSA(t *testing.T) {
	g := NewWithT(t)
	for _, sel := range Selections() {
		g.Expect(names(t, sel)).To(ContainElement("gmsa"))
		text, err := ClusterResourceSets(sel)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range decode(t, process(t, text, nil)) {
			if crs, ok := o.typed.(*addonsv1.ClusterResourceSet); ok && crs.Name == "win1-gmsa" {
				g.Expect(crs.Spec.ClusterSelector.MatchLabels).To(Equal(map[string]string{ClusterNameLabel: "win1", GMSALabel: "true"}))
			}
		}
	}
	objs := decode(t, processedManifests(t, vcenterCalico, "gmsa", nil))
	job := container(t, objs, "Job gmsa-install")
	g.Expect(job.Image).To(Equal("ghcr.io/capwin/capwin-addon-installer:dev"))
	g.Expect(job.Command).To(BeEmpty(), "the image's entrypoint is the installer")
	g.Expect(job.Args).To(Equal([]string{"gmsa"}))
	g.Expect(env(job)).To(HaveLen(8), "HOME, the API server's address and what addoninstaller.optionsFromEnv reads")
	// The pins the installer's tests check against the test copy of the release files.
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_VERSION", gmsa.Pinned.Version))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_MANIFESTS_URL", gmsa.Pinned.ManifestsURL))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_WEBHOOK_IMAGE", gmsa.Pinned.WebhookImage))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_CRD_SHA256", gmsa.Pinned.CRDSHA256))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_WEBHOOK_SHA256", gmsa.Pinned.WebhookSHA256))

	custom := decode(t, processedManifests(t, vcenterCalico, "gmsa", map[string]string{"GMSA_INSTALL_IMAGE": "mirror.example.com/tools:1"}))
	g.Expect(container(t, custom, "Job gmsa-install").Image).To(Equal("mirror.example.com/tools:1"))
}
