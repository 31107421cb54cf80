package clusterctl_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capwin/capwin/internal/release"
)

// cniOf is the pod network a flavor carries.
func cniOf(flavor string) string {
	if strings.HasSuffix(flavor, "-flannel") {
		return "flannel"
	}
	return "calico"
}

// checkOneCNI checks a generated cluster file: the Cluster is labelled with its CNI, the Windows
// nodes are prepared for it, and the addons are that CNI's only (no object of the other one).
func checkOneCNI(g Gomega, flavor string, objs []unstructured.Unstructured) {
	cni, other := cniOf(flavor), "flannel"
	if cni == "flannel" {
		other = "calico"
	}
	var addons []string
	for _, o := range objs {
		switch o.GetKind() {
		case "Cluster":
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("capwin.io/cni", cni))
		case "WindowsConfigTemplate":
			if plugin, found, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "cni", "plugin"); found {
				g.Expect(plugin).To(Equal(cni))
			}
		case "ClusterResourceSet":
			addons = append(addons, strings.TrimPrefix(o.GetName(), "win1-"))
		}
		g.Expect(strings.ToLower(o.GetName())).NotTo(ContainSubstring(other), "%s: %s %s", flavor, o.GetKind(), o.GetName())
	}
	g.Expect(addons).To(ConsistOf(cni, "kube-proxy-windows", "runtimeclasses", "node-health", "storage", "gmsa",
		"windows-exporter", "windows-exporter-servicemonitor"), flavor)
}

// TestOneCNIPerFile generates every flavor and checks that its file carries one pod network.
func TestOneCNIPerFile(t *testing.T) {
	cfg := localRepo(t, nil)
	for _, flavor := range release.Flavors {
		g := NewWithT(t)
		tmpl, err := generate(context.Background(), cfg, kubeconfig, "default", flavor, false)
		g.Expect(err).NotTo(HaveOccurred())
		checkOneCNI(g, flavor, tmpl.Objs())
	}
}

// TestCredentialCharacters generates both infrastructures with a user name and password full of
// characters that end a quoted YAML string: the Secret must hold them exactly. (Before, a "'"
// made clusterctl fail with a YAML error that named no variable.)
func TestCredentialCharacters(t *testing.T) {
	user, password := `it's "me"`, ` p'a"s#s: {w} [o] %r*d&!|> `
	cfg := localRepo(t, map[string]string{"VSPHERE_USERNAME": user, "VSPHERE_PASSWORD": password,
		"HYPERV_USERNAME": user, "HYPERV_PASSWORD": password})
	for _, flavor := range []string{"windows", "hyperv-windows", "windows-topology"} {
		g := NewWithT(t)
		tmpl, err := generate(context.Background(), cfg, kubeconfig, "default", flavor, false)
		g.Expect(err).NotTo(HaveOccurred(), flavor)
		found := 0
		for _, o := range tmpl.Objs() {
			if o.GetKind() != "Secret" {
				continue
			}
			data, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
			g.Expect(data).To(Equal(map[string]string{"username": user, "password": password}), flavor)
			found++
		}
		g.Expect(found).To(Equal(1), flavor)
	}
}
