package addons

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
)

// gmsaDeploy is the test copy of windows-gmsa v0.13.0's admission-webhook/deploy directory.
const gmsaDeploy = "../../addoninstaller/gmsa/testdata/v0.13.0/admission-webhook/deploy"

// TestGMSA checks the optional gMSA addon: every selection carries it, its ClusterResourceSet
// needs the Cluster label capwin.io/gmsa: "true", and its Job pins the release, the image and
// the SHA-256 of the two upstream files (those of the test copy, taken from the tag).
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
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_VERSION", "v0.13.0"))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_MANIFESTS_URL", "https://raw.githubusercontent.com/kubernetes-sigs/windows-gmsa"))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_WEBHOOK_IMAGE", "registry.k8s.io/gmsa-webhook/k8s-gmsa-webhook:v0.13.0"))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_CRD_SHA256", fileSHA256(t, "gmsa-crd.yml")))
	g.Expect(env(job)).To(HaveKeyWithValue("GMSA_WEBHOOK_SHA256", fileSHA256(t, "gmsa-webhook.yml.tpl")))

	custom := decode(t, processedManifests(t, vcenterCalico, "gmsa", map[string]string{"GMSA_INSTALL_IMAGE": "mirror.example.com/tools:1"}))
	g.Expect(container(t, custom, "Job gmsa-install").Image).To(Equal("mirror.example.com/tools:1"))
}

func fileSHA256(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gmsaDeploy, name))
	if err != nil {
		t.Fatal(err)
	}
	return sha256Hex(b)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
