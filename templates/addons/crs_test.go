package addons

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
)

// TestClusterResourceSets checks the wrapping: per addon one ConfigMap holding exactly the addon's
// manifest and one ApplyOnce ClusterResourceSet selecting this cluster and its CNI.
func TestClusterResourceSets(t *testing.T) {
	g := NewWithT(t)
	text, err := ClusterResourceSets()
	g.Expect(err).NotTo(HaveOccurred())
	objs := decode(t, process(t, text, nil))
	g.Expect(objs).To(HaveLen(2 * len(Names())))

	cms := map[string]*corev1.ConfigMap{}
	sets := map[string]*addonsv1.ClusterResourceSet{}
	for _, o := range objs {
		g.Expect(o.u.GetNamespace()).To(BeEmpty(), "clusterctl sets the namespace")
		switch obj := o.typed.(type) {
		case *corev1.ConfigMap:
			cms[obj.Name] = obj
		case *addonsv1.ClusterResourceSet:
			sets[obj.Name] = obj
		default:
			t.Fatalf("unexpected %s", o.u.GetKind())
		}
	}
	for _, name := range Names() {
		full := "win1-" + name
		cm := cms[full]
		g.Expect(cm).NotTo(BeNil(), "ConfigMap %s", full)
		g.Expect(cm.Data).To(Equal(map[string]string{name + ".yaml": string(processedManifests(t, name, nil))}))
		// A literal block keeps the template readable and the substitutions inside the text.
		g.Expect(string(text)).To(ContainSubstring("\n  " + name + ".yaml: |\n"))

		crs := sets[full]
		g.Expect(crs).NotTo(BeNil(), "ClusterResourceSet %s", full)
		g.Expect(crs.Spec.Strategy).To(Equal(string(addonsv1.ClusterResourceSetStrategyApplyOnce)))
		g.Expect(crs.Spec.Resources).To(Equal([]addonsv1.ResourceRef{{Kind: "ConfigMap", Name: full}}))
		cni, err := CNI(name)
		g.Expect(err).NotTo(HaveOccurred())
		want := metav1.LabelSelector{MatchLabels: map[string]string{ClusterNameLabel: "win1"}}
		if cni != "" {
			want.MatchLabels[CNILabel] = cni
		} else {
			want.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: CNILabel, Operator: metav1.LabelSelectorOpExists}}
		}
		g.Expect(crs.Spec.ClusterSelector).To(Equal(want))
	}
	g.Expect(Names()).To(ContainElements("calico", "flannel", "kube-proxy-windows-calico", "kube-proxy-windows-flannel", "runtimeclasses"))
	_, err = Manifests("nope")
	g.Expect(err).To(HaveOccurred())
}

// TestNoTrailingWhitespace keeps the YAML emitter on literal blocks: a line ending in a blank
// would make it quote the whole manifest instead.
func TestNoTrailingWhitespace(t *testing.T) {
	text, err := ClusterResourceSets()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for i, line := range strings.Split(string(text), "\n") {
		if strings.TrimRight(line, " \t") != line {
			t.Errorf("line %d ends in whitespace: %q", i+1, line)
		}
	}
}
