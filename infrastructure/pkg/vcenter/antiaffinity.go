package vcenter

import (
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// Anti-affinity (spec.antiAffinity) is a DRS VM-VM anti-affinity rule per group of machines (a
// MachineDeployment, a control plane) in the compute cluster of their VMs. Each VM of a group
// carries the rule's name in keyGroup from its clone on; the rule lists exactly the marked VMs
// that are not being deleted, and exists only while they are two or more (a rule of one VM
// constrains nothing, and vCenter may refuse it). The rule is brought to that state before a
// VM is powered on (DRS places it by the rule) and before it is destroyed; the last VM of a
// group to go removes it, so a deleted MachineDeployment leaves no rule behind.
//
// Why a DRS rule and not a vSphere cluster module (what CAPV uses): a module is soft only, while
// spec.antiAffinity offers Hard; both are modelled by vcsim, and a rule is plain vim25 (no vAPI
// session). Why in the backend and not in the lifecycle or the VCenterCluster reconciler: the
// rule is a property of where vCenter runs the VM, like its resource pool, and the lifecycle
// already calls PowerOn and Destroy at the two points where it must be right; Hyper-V spreads
// by its own placement and has no such rule, so the backend contract does not change.

// keyGroup marks a VM as a member of an anti-affinity group: its value is the rule's name. Like
// keyOwner it is not a guestinfo key.
const keyGroup = "capwin.antiAffinity"

// maxRuleName bounds the rule's name (vSphere's limit for a rule name is 80 characters).
const maxRuleName = 80

// antiAffinity returns the spec's mode, None when unset.
func antiAffinity(spec *infrav1.VCenterMachineSpec) infrav1.AntiAffinityMode {
	if spec.AntiAffinity == nil || spec.AntiAffinity.Mode == "" {
		return infrav1.AntiAffinityNone
	}
	return spec.AntiAffinity.Mode
}

// groupRule names the anti-affinity rule of the machine's group: "" when the spec asks for none
// or the Machine belongs to no group (hypervisor.GroupName).
func groupRule(s *hypervisor.Scope, spec *infrav1.VCenterMachineSpec) string {
	if antiAffinity(spec) == infrav1.AntiAffinityNone {
		return ""
	}
	return hypervisor.GroupName(s, maxRuleName)
}

// findRule returns the anti-affinity rule named name among a cluster's rules (nil: none).
func findRule(rules []types.BaseClusterRuleInfo, name string) *types.ClusterAntiAffinityRuleSpec {
	for _, r := range rules {
		if aa, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && aa.Name == name {
			return aa
		}
	}
	return nil
}

// ruleChange is the edit that makes the rule list exactly vms (sorted), mandatory or not: nil
// when it does already, an add for a missing rule, a removal when fewer than two VMs are left.
func ruleChange(rule *types.ClusterAntiAffinityRuleSpec, name string, vms []types.ManagedObjectReference, mandatory bool) *types.ClusterRuleSpec {
	slices.SortFunc(vms, byValue)
	if len(vms) < 2 {
		if rule == nil {
			return nil
		}
		return &types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: rule.Key}}
	}
	want := &types.ClusterAntiAffinityRuleSpec{
		ClusterRuleInfo: types.ClusterRuleInfo{Name: name, Enabled: ptr.To(true), Mandatory: ptr.To(mandatory)},
		Vm:              vms,
	}
	if rule == nil {
		return &types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd}, Info: want}
	}
	have := slices.Clone(rule.Vm)
	slices.SortFunc(have, byValue)
	if slices.Equal(have, vms) && ptr.Deref(rule.Mandatory, false) == mandatory && ptr.Deref(rule.Enabled, false) {
		return nil
	}
	want.Key, want.RuleUuid = rule.Key, rule.RuleUuid
	return &types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: want}
}

func byValue(a, b types.ManagedObjectReference) int { return strings.Compare(a.Value, b.Value) }
