//go:build e2e

package kind

import (
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestWindowsMDRemediationTemplate checks the flavor the remediation spec generates from the
// windows flavor (no cluster needed: go -C test test -tags e2e ./e2e/kind -run TestWindowsMD).
func TestWindowsMDRemediationTemplate(t *testing.T) {
	windows, err := os.ReadFile("../../../templates/cluster-template-windows.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := windowsMDRemediationTemplate(windows)
	if err != nil {
		t.Fatal(err)
	}
	in, got := strings.Split(string(windows), "\n---\n"), strings.Split(string(out), "\n---\n")
	if len(in) != len(got) {
		t.Fatalf("%d objects, the windows flavor has %d", len(got), len(in))
	}
	var mhcs []clusterv1.MachineHealthCheck
	for i := range got {
		if !machineHealthCheckKind.MatchString(got[i]) {
			if i > 0 && got[i] != in[i] {
				t.Errorf("object %d differs from the windows flavor's", i)
			}
			continue
		}
		var mhc clusterv1.MachineHealthCheck
		if err := yaml.UnmarshalStrict([]byte(got[i]), &mhc); err != nil {
			t.Fatal(err)
		}
		mhcs = append(mhcs, mhc)
	}
	if len(mhcs) != 1 {
		t.Fatalf("%d MachineHealthChecks", len(mhcs))
	}
	mhc := mhcs[0]
	if mhc.Name != "${CLUSTER_NAME}-windows" || mhc.Spec.ClusterName != "${CLUSTER_NAME}" {
		t.Errorf("name %q, clusterName %q", mhc.Name, mhc.Spec.ClusterName)
	}
	if sel := mhc.Spec.Selector; len(sel.MatchExpressions) != 0 || sel.MatchLabels[clusterv1.MachineDeploymentNameLabel] != "${CLUSTER_NAME}-windows" {
		t.Errorf("selector %+v: want the Windows MachineDeployment's machines by matchLabels", sel)
	}
	c := mhc.Spec.Checks.UnhealthyNodeConditions
	if len(c) < 2 || c[0].Type != remediationNodeCondition || c[0].Status != corev1.ConditionFalse || *c[0].TimeoutSeconds != remediationTimeout {
		t.Errorf("unhealthy node conditions %+v: want %s=False first", c, remediationNodeCondition)
	}
	if mhc.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo != nil || mhc.Spec.Checks.NodeStartupTimeoutSeconds == nil {
		t.Errorf("remediation %+v, checks %+v", mhc.Spec.Remediation, mhc.Spec.Checks)
	}
}
