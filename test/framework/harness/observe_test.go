package harness

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestMachineReadyNeedsTheWholeStatus(t *testing.T) {
	readyCond := []metav1.Condition{{Type: clusterv1.MachineReadyCondition, Status: metav1.ConditionTrue}}
	node := clusterv1.MachineNodeReference{Name: "win-1"}
	for _, c := range []struct {
		name   string
		status clusterv1.MachineStatus
		want   bool
	}{
		{"running", clusterv1.MachineStatus{Conditions: readyCond, NodeRef: node, Phase: string(clusterv1.MachinePhaseRunning)}, true},
		// Seen in a loaded CI run: the conditions were patched before nodeRef and phase.
		{"conditions ahead of the rest", clusterv1.MachineStatus{Conditions: readyCond, Phase: string(clusterv1.MachinePhaseProvisioning)}, false},
		{"no nodeRef", clusterv1.MachineStatus{Conditions: readyCond, Phase: string(clusterv1.MachinePhaseRunning)}, false},
		{"not ready", clusterv1.MachineStatus{NodeRef: node, Phase: string(clusterv1.MachinePhaseRunning)}, false},
	} {
		m := &clusterv1.Machine{Status: c.status}
		if got := MachineReady(m); got != c.want {
			t.Errorf("%s: machineReady = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCapwinRulesCountsGroupsAndRules(t *testing.T) {
	cfg := &types.ClusterConfigInfoEx{
		Rule: []types.BaseClusterRuleInfo{
			&types.ClusterAntiAffinityRuleSpec{ClusterRuleInfo: types.ClusterRuleInfo{Name: "capwin-ns-c-md-a-0123456789"}},
			&types.ClusterVmHostRuleInfo{ClusterRuleInfo: types.ClusterRuleInfo{Name: "capwin-ns-c-fd-rack-a-0123456789"}},
			&types.ClusterVmHostRuleInfo{ClusterRuleInfo: types.ClusterRuleInfo{Name: "admins-rule"}},
		},
		Group: []types.BaseClusterGroupInfo{
			&types.ClusterVmGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: "capwin-ns-c-fd-rack-a-0123456789"}},
			&types.ClusterHostGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: HostGroup}},
			&types.ClusterVmGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: "admins-vms"}},
		},
	}
	if n := capwinRules(cfg); n != 3 {
		t.Errorf("capwinRules = %d, want 3 (an anti-affinity rule, a VM-Host rule and a VM group of capwin)", n)
	}
}
