package vcenter

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// A failure domain's hostGroup is a DRS VM group per failure domain of a cluster, holding the
// domain's VMs, and a VM-Host rule tying it to the administrator's host group. Each VM cloned into
// a failure domain carries the VM group's name in keyDomain; the group lists exactly the marked VMs
// that are not being deleted, and the group and its rule exist only while there is one. Like the
// anti-affinity rule (antiaffinity.go) they are brought to that state before a VM is powered on
// and before one is destroyed, under the same per-cluster lock; the domain's last VM removes both.
// A domain whose hostGroup was dropped from the spec loses its group and rule when one of its VMs
// is deleted.

// keyDomain marks a VM as a member of its failure domain's VM group: its value is the group's
// name. Like keyOwner it is not a guestinfo key.
const keyDomain = "capwin.failureDomain"

// domainGroup names the DRS VM group (and VM-Host rule) of the machine's failure domain: "" when
// the machine has none. The name is deterministic (the Cluster's UID and the domain) and readable,
// cut to maxRuleName with the hash kept, like groupRule's.
func domainGroup(s *hypervisor.Scope, fd *infrav1.VCenterFailureDomain) string {
	if fd == nil || s.Cluster == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(string(s.Cluster.UID) + "/fd-" + fd.Name))
	hash := hex.EncodeToString(sum[:])[:10]
	readable := strings.Join([]string{"capwin", s.Cluster.Namespace, s.Cluster.Name, "fd", fd.Name}, "-")
	return readable[:min(len(readable), maxRuleName-len(hash)-1)] + "-" + hash
}

// vmTags are the tags a machine's VM gets: its spec.tags, then its failure domain's zone and
// region that the spec does not name already.
func vmTags(spec *infrav1.VCenterMachineSpec, domain []infrav1.VCenterTag) []infrav1.VCenterTag {
	out := slices.Clone(spec.Tags)
	for _, t := range domain {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// domainNetworks replaces, by position, the machine's networks with its failure domain's.
func domainNetworks(spec *infrav1.VCenterMachineSpec, fd *infrav1.VCenterFailureDomain) []string {
	nets := make([]string, 0, len(spec.Network))
	for i, n := range spec.Network {
		if fd != nil && i < len(fd.Networks) {
			nets = append(nets, fd.Networks[i])
			continue
		}
		nets = append(nets, n.NetworkName)
	}
	return nets
}

// clusterGroups are a compute cluster's DRS groups and rules, as read from its configurationEx.
type clusterGroups struct {
	groups []types.BaseClusterGroupInfo
	rules  []types.BaseClusterRuleInfo
}

func (c clusterGroups) vmGroup(name string) *types.ClusterVmGroup {
	for _, g := range c.groups {
		if v, ok := g.(*types.ClusterVmGroup); ok && v.Name == name {
			return v
		}
	}
	return nil
}

func (c clusterGroups) hostGroup(name string) *types.ClusterHostGroup {
	for _, g := range c.groups {
		if h, ok := g.(*types.ClusterHostGroup); ok && h.Name == name {
			return h
		}
	}
	return nil
}

func (c clusterGroups) vmHostRule(name string) *types.ClusterVmHostRuleInfo {
	for _, r := range c.rules {
		if h, ok := r.(*types.ClusterVmHostRuleInfo); ok && h.Name == name {
			return h
		}
	}
	return nil
}

// domainChanges are the cluster reconfigures, in order, that make the VM group name hold exactly
// vms and the VM-Host rule of the same name tie it to hostGroup (mandatory or not); with no
// hostGroup or no VM they remove the rule, then the group (vCenter refuses to remove a group a
// rule names). Each is its own reconfigure: the group exists before a rule names it. Nil: nothing
// to do.
func domainChanges(have clusterGroups, name string, hostGroup *infrav1.VCenterHostGroup, vms []types.ManagedObjectReference) []*types.ClusterConfigSpecEx {
	group, rule := have.vmGroup(name), have.vmHostRule(name)
	var out []*types.ClusterConfigSpecEx
	if hostGroup == nil || len(vms) == 0 {
		if rule != nil {
			out = append(out, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{{
				ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: rule.Key}}}})
		}
		if group != nil {
			out = append(out, &types.ClusterConfigSpecEx{GroupSpec: []types.ClusterGroupSpec{{
				ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: name}}}})
		}
		return out
	}
	slices.SortFunc(vms, byValue)
	if op := groupOp(group, vms); op != "" {
		out = append(out, &types.ClusterConfigSpecEx{GroupSpec: []types.ClusterGroupSpec{{
			ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: op},
			Info:            &types.ClusterVmGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: name}, Vm: vms}}}})
	}
	want := &types.ClusterVmHostRuleInfo{
		ClusterRuleInfo: types.ClusterRuleInfo{Name: name, Enabled: ptr.To(true), Mandatory: ptr.To(hostGroup.Mandatory())},
		VmGroupName:     name, AffineHostGroupName: hostGroup.Name,
	}
	switch {
	case rule == nil:
		out = append(out, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{{
			ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd}, Info: want}}})
	case rule.VmGroupName != name || rule.AffineHostGroupName != hostGroup.Name || rule.AntiAffineHostGroupName != "" ||
		ptr.Deref(rule.Mandatory, false) != hostGroup.Mandatory() || !ptr.Deref(rule.Enabled, false):
		want.Key, want.RuleUuid = rule.Key, rule.RuleUuid
		out = append(out, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{{
			ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: want}}})
	}
	return out
}

// groupOp is the operation that makes the VM group hold vms (sorted): "" when it does already.
func groupOp(group *types.ClusterVmGroup, vms []types.ManagedObjectReference) types.ArrayUpdateOperation {
	if group == nil {
		return types.ArrayUpdateOperationAdd
	}
	have := slices.Clone(group.Vm)
	slices.SortFunc(have, byValue)
	if slices.Equal(have, vms) {
		return ""
	}
	return types.ArrayUpdateOperationEdit
}
