package vcenter

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"
)

// TestRuleChange: the edit that makes a rule list exactly the group's VMs.
func TestRuleChange(t *testing.T) {
	refs := func(ids ...string) []types.ManagedObjectReference {
		var out []types.ManagedObjectReference
		for _, id := range ids {
			out = append(out, vmRef(id))
		}
		return out
	}
	rule := func(mandatory bool, ids ...string) *types.ClusterAntiAffinityRuleSpec {
		return &types.ClusterAntiAffinityRuleSpec{ClusterRuleInfo: types.ClusterRuleInfo{
			Key: 7, RuleUuid: "u", Name: "r", Enabled: ptr.To(true), Mandatory: ptr.To(mandatory)}, Vm: refs(ids...)}
	}
	for _, tc := range []struct {
		name      string
		have      *types.ClusterAntiAffinityRuleSpec
		vms       []string
		mandatory bool
		op        types.ArrayUpdateOperation // "" for no change
		want      []string
	}{
		{"one VM, no rule", nil, []string{"vm-1"}, true, "", nil},
		{"two VMs make a rule", nil, []string{"vm-2", "vm-1"}, true, types.ArrayUpdateOperationAdd, []string{"vm-1", "vm-2"}},
		{"same VMs in another order", rule(true, "vm-2", "vm-1"), []string{"vm-1", "vm-2"}, true, "", nil},
		{"a VM joins", rule(true, "vm-1", "vm-2"), []string{"vm-1", "vm-2", "vm-3"}, true, types.ArrayUpdateOperationEdit, []string{"vm-1", "vm-2", "vm-3"}},
		{"the mode changes", rule(false, "vm-1", "vm-2"), []string{"vm-1", "vm-2"}, true, types.ArrayUpdateOperationEdit, []string{"vm-1", "vm-2"}},
		{"one VM left", rule(true, "vm-1", "vm-2"), []string{"vm-1"}, true, types.ArrayUpdateOperationRemove, nil},
		{"none left", rule(true, "vm-1", "vm-2"), nil, true, types.ArrayUpdateOperationRemove, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := ruleChange(tc.have, "r", refs(tc.vms...), tc.mandatory)
			if tc.op == "" {
				g.Expect(c).To(BeNil())
				return
			}
			g.Expect(c.Operation).To(Equal(tc.op))
			if tc.op == types.ArrayUpdateOperationRemove {
				g.Expect(c.RemoveKey).To(Equal(int32(7)))
				return
			}
			info := c.Info.(*types.ClusterAntiAffinityRuleSpec)
			g.Expect(info.Vm).To(Equal(refs(tc.want...)))
			g.Expect(*info.Mandatory).To(Equal(tc.mandatory))
			g.Expect(info.Name).To(Equal("r"))
			if tc.op == types.ArrayUpdateOperationEdit {
				g.Expect(info.Key).To(Equal(int32(7)), "vCenter edits a rule by its key")
			}
		})
	}
}
