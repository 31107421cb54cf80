package vcenter

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func TestDomainNetworksAndTags(t *testing.T) {
	g := NewWithT(t)
	sp := spec(func(s *infrav1.VCenterMachineSpec) {
		s.Network = append(s.Network, infrav1.NetworkDevice{NetworkName: "backup"})
		s.Tags = []infrav1.VCenterTag{{Category: "zone", Name: "a"}}
	})
	g.Expect(domainNetworks(sp, nil)).To(Equal([]string{"VM Network", "backup"}))
	g.Expect(domainNetworks(sp, &infrav1.VCenterFailureDomain{Networks: []string{"pg-a"}})).To(Equal([]string{"pg-a", "backup"}))
	g.Expect(vmTags(sp, []infrav1.VCenterTag{{Category: "zone", Name: "a"}, {Category: "region", Name: "r"}})).To(Equal(
		[]infrav1.VCenterTag{{Category: "zone", Name: "a"}, {Category: "region", Name: "r"}}), "a tag named twice goes on once")
}

func TestDomainChanges(t *testing.T) {
	g := NewWithT(t)
	vm := func(id string) types.ManagedObjectReference {
		return types.ManagedObjectReference{Type: "VirtualMachine", Value: id}
	}
	must := &infrav1.VCenterHostGroup{Name: "hosts-a", Mode: infrav1.HostGroupMust}
	ops := func(changes []*types.ClusterConfigSpecEx) []string {
		var out []string
		for _, c := range changes {
			for _, gs := range c.GroupSpec {
				out = append(out, "group "+string(gs.Operation))
			}
			for _, rs := range c.RulesSpec {
				out = append(out, "rule "+string(rs.Operation))
			}
		}
		return out
	}

	g.Expect(domainChanges(clusterGroups{}, "g", must, nil)).To(BeEmpty(), "nothing to remove")
	add := domainChanges(clusterGroups{}, "g", must, []types.ManagedObjectReference{vm("vm-2"), vm("vm-1")})
	g.Expect(ops(add)).To(Equal([]string{"group add", "rule add"}), "the group exists before a rule names it")
	g.Expect(vmIDs(add[0].GroupSpec[0].Info.(*types.ClusterVmGroup).Vm)).To(Equal([]string{"vm-1", "vm-2"}))
	rule := add[1].RulesSpec[0].Info.(*types.ClusterVmHostRuleInfo)
	g.Expect(rule.AffineHostGroupName).To(Equal("hosts-a"))
	g.Expect(*rule.Mandatory).To(BeTrue())

	have := clusterGroups{
		groups: []types.BaseClusterGroupInfo{&types.ClusterVmGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: "g"}, Vm: []types.ManagedObjectReference{vm("vm-2"), vm("vm-1")}}},
		rules: []types.BaseClusterRuleInfo{&types.ClusterVmHostRuleInfo{ClusterRuleInfo: types.ClusterRuleInfo{Key: 7, Name: "g", Enabled: ptr.To(true), Mandatory: ptr.To(true)},
			VmGroupName: "g", AffineHostGroupName: "hosts-a"}},
	}
	g.Expect(domainChanges(have, "g", must, []types.ManagedObjectReference{vm("vm-1"), vm("vm-2")})).To(BeEmpty(), "in place already")
	g.Expect(ops(domainChanges(have, "g", must, []types.ManagedObjectReference{vm("vm-1")}))).To(Equal([]string{"group edit"}))
	soft := domainChanges(have, "g", &infrav1.VCenterHostGroup{Name: "hosts-a"}, []types.ManagedObjectReference{vm("vm-1"), vm("vm-2")})
	g.Expect(ops(soft)).To(Equal([]string{"rule edit"}), "Should is the default mode")
	g.Expect(soft[0].RulesSpec[0].Info.GetClusterRuleInfo().Key).To(BeEquivalentTo(7))
	gone := domainChanges(have, "g", must, nil)
	g.Expect(ops(gone)).To(Equal([]string{"rule remove", "group remove"}), "a group named by a rule cannot go first")
	g.Expect(gone[0].RulesSpec[0].RemoveKey).To(BeEquivalentTo(7))
	g.Expect(gone[1].GroupSpec[0].RemoveKey).To(Equal("g"))
	g.Expect(ops(domainChanges(have, "g", nil, []types.ManagedObjectReference{vm("vm-1")}))).To(Equal([]string{"rule remove", "group remove"}), "a dropped hostGroup")
}

// TestCloneSpecInDomain: a VM of a failure domain carries its VM group's mark; it is cloned powered
// off when the domain has a hostGroup (the group first) or tags (zone and region), and powered on
// by the clone otherwise.
func TestCloneSpecInDomain(t *testing.T) {
	g := NewWithT(t)
	in := cloneInput{Spec: spec(nil), UID: "u", Place: template(), UserData: []byte("x"), Metadata: []byte("m"), Domain: "capwin-ns-c-fd-a-0123456789"}
	plain, err := cloneSpec(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plain.Config.ExtraConfig).To(ContainElement(&types.OptionValue{Key: keyDomain, Value: "capwin-ns-c-fd-a-0123456789"}))
	g.Expect(plain.PowerOn).To(BeTrue(), "a domain without hostGroup or tags holds nothing back")
	in.HostGroup = true
	grouped, err := cloneSpec(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(grouped.PowerOn).To(BeFalse())
	in.HostGroup, in.Tagged = false, true
	tagged, err := cloneSpec(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tagged.PowerOn).To(BeFalse())
}
