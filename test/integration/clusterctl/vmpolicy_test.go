package clusterctl_test

import (
	"strings"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// vmPolicyValues are the anti-affinity and tag values a flavor is rendered with: windows-flannel
// sets them all, windows keeps the defaults (Soft for both groups, no tags).
func vmPolicyValues(flavor string) map[string]string {
	if flavor != "windows-flannel" {
		return nil
	}
	return map[string]string{
		"WINDOWS_ANTI_AFFINITY":       "Hard",
		"CONTROL_PLANE_ANTI_AFFINITY": "None",
		"VSPHERE_TAGS":                "[{category: backup, name: gold}, {category: cost-center, name: '4711'}]",
	}
}

// checkVMPolicy checks that the vCenter flavors' machine templates carry the anti-affinity mode
// of their group (Soft unless set) and every template VSPHERE_TAGS (none unless set); the
// Hyper-V flavors' templates have the same anti-affinity (a failover cluster's class names) and no
// tags.
func checkVMPolicy(g Gomega, flavor string, objs []unstructured.Unstructured) {
	wantMode := map[string]string{"Windows": "Soft", "Linux": "Soft"}
	var wantTags []any
	if vmPolicyValues(flavor) != nil {
		wantMode = map[string]string{"Windows": "Hard", "Linux": "None"}
		wantTags = []any{map[string]any{"category": "backup", "name": "gold"}, map[string]any{"category": "cost-center", "name": "4711"}}
	}
	for _, o := range objs {
		if !strings.HasSuffix(o.GetKind(), "MachineTemplate") || o.GetKind() == "KubeadmControlPlaneTemplate" {
			continue
		}
		spec := o.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		os, _ := spec["os"].(string)
		mode, _, _ := unstructured.NestedString(spec, "antiAffinity", "mode")
		g.Expect(mode).To(Equal(wantMode[os]), "%s %s (%s): antiAffinity.mode", o.GetKind(), o.GetName(), os)
		if o.GetKind() == "HyperVMachineTemplate" {
			g.Expect(spec).NotTo(HaveKey("tags"))
			continue
		}
		tags, _, _ := unstructured.NestedSlice(spec, "tags")
		if wantTags == nil {
			g.Expect(tags).To(BeEmpty(), "%s %s: tags", o.GetKind(), o.GetName())
		} else {
			g.Expect(tags).To(Equal(wantTags), "%s %s: tags", o.GetKind(), o.GetName())
		}
	}
}
