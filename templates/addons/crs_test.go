package addons

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
)

// TestClusterResourceSets checks the wrapping: per addon of a selection one ConfigMap holding
// exactly the addon's manifest and one ClusterResourceSet selecting this cluster only.
func TestClusterResourceSets(t *testing.T) {
	for _, sel := range Selections() {
		g := NewWithT(t)
		text, err := ClusterResourceSets(sel)
		g.Expect(err).NotTo(HaveOccurred())
		objs := decode(t, process(t, text, nil))
		g.Expect(objs).To(HaveLen(2 * len(names(t, sel))))

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
		for _, name := range names(t, sel) {
			full := "win1-" + name
			cm := cms[full]
			g.Expect(cm).NotTo(BeNil(), "ConfigMap %s", full)
			g.Expect(cm.Data).To(Equal(map[string]string{name + ".yaml": string(processedManifests(t, sel, name, nil))}))
			g.Expect(cm.Labels).To(Equal(map[string]string{AddonLabel: name}))
			// A literal block keeps the template readable and the substitutions inside the text.
			g.Expect(string(text)).To(ContainSubstring("\n  " + name + ".yaml: |\n"))

			crs := sets[full]
			g.Expect(crs).NotTo(BeNil(), "ClusterResourceSet %s", full)
			g.Expect(crs.Labels).To(Equal(map[string]string{AddonLabel: name}))
			strategy := addonsv1.ClusterResourceSetStrategyApplyOnce
			if name == "kube-proxy-windows" {
				strategy = addonsv1.ClusterResourceSetStrategyReconcile
			}
			g.Expect(crs.Spec.Strategy).To(Equal(string(strategy)), name)
			g.Expect(crs.Spec.Resources).To(Equal([]addonsv1.ResourceRef{{Kind: "ConfigMap", Name: full}}))
			want := map[string]string{ClusterNameLabel: "win1"}
			switch name { // optional: only for a Cluster that asks for it
			case "storage":
				want[StorageLabel] = "true"
			case "gmsa":
				want[GMSALabel] = "true"
			case "windows-exporter":
				want[MonitoringLabel] = "true"
			case "windows-exporter-servicemonitor":
				want[ServiceMonitorLabel] = "true"
			}
			g.Expect(crs.Spec.ClusterSelector).To(Equal(metav1.LabelSelector{MatchLabels: want}))
		}
		g.Expect(names(t, sel)).To(Equal([]string{sel.CNI, "kube-proxy-windows", "runtimeclasses", "node-health", "storage", "gmsa",
			"windows-exporter", "windows-exporter-servicemonitor"}))
	}
	_, err := Manifests(vcenterCalico, "flannel")
	NewWithT(t).Expect(err).To(HaveOccurred())
	_, err = ClusterResourceSets(Selection{CNI: "none", Infrastructure: VCenter})
	NewWithT(t).Expect(err).To(HaveOccurred())
}

// TestOneCNI checks that a selection carries its own pod network and nothing of the other: no
// object and no image of the other CNI (an air-gapped site mirrors only what it runs), and its
// own CNI's objects are there.
func TestOneCNI(t *testing.T) {
	words := map[string][]string{"calico": {"calico", "tigera"}, "flannel": {"flannel"}}
	for _, sel := range Selections() {
		g := NewWithT(t)
		text, err := ClusterResourceSets(sel)
		g.Expect(err).NotTo(HaveOccurred())
		var ids []string
		for _, wrapper := range decode(t, process(t, text, nil)) {
			ids = append(ids, wrapper.u.GetName())
			cm, ok := wrapper.typed.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			for _, manifest := range cm.Data {
				objs := decode(t, []byte(manifest))
				for _, o := range objs {
					ids = append(ids, o.u.GetName(), o.u.GetNamespace())
				}
				for _, spec := range podSpecs(objs) {
					for _, c := range append(spec.InitContainers, spec.Containers...) {
						ids = append(ids, c.Image)
					}
				}
			}
		}
		all := strings.ToLower(strings.Join(ids, " "))
		for cni, ws := range words {
			for _, w := range ws {
				if cni == sel.CNI {
					g.Expect(all).To(ContainSubstring(w), "%+v lacks %s", sel, w)
				} else {
					g.Expect(all).NotTo(ContainSubstring(w), "%+v carries %s", sel, w)
				}
			}
		}
	}
}

// TestNoTrailingWhitespace keeps the YAML emitter on literal blocks: a line ending in a blank
// would make it quote the whole manifest instead.
func TestNoTrailingWhitespace(t *testing.T) {
	for _, sel := range Selections() {
		text, err := ClusterResourceSets(sel)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		for i, line := range strings.Split(string(text), "\n") {
			if strings.TrimRight(line, " \t") != line {
				t.Errorf("line %d ends in whitespace: %q", i+1, line)
			}
		}
	}
}
