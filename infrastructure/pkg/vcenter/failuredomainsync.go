package vcenter

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// syncDomain brings the VM group and VM-Host rule that vm's mark (keyDomain) names to the VMs
// carrying that mark in the compute cluster of vm, without vm when it is leaving (about to be
// destroyed), and the rule to the machine's failure domain's hostGroup. The name is read from
// the VM, not computed from the spec: a domain removed from the VCenterCluster, or a Cluster that
// clusterctl moved (a new UID), still finds the group its VMs are in. A VM that is not leaving is
// synced only when its domain has a hostGroup; a leaving one of a machine placed in a domain
// always, so a hostGroup (or a whole domain) dropped from the spec leaves no group behind.
func (b *backend) syncDomain(ctx context.Context, s *hypervisor.Scope, vm types.ManagedObjectReference, leaving bool) error {
	if s.Machine == nil || s.Machine.Spec.FailureDomain == "" || (!leaving && (b.fd == nil || b.fd.HostGroup == nil)) {
		return nil
	}
	var hostGroup *infrav1.VCenterHostGroup
	if b.fd != nil {
		hostGroup = b.fd.HostGroup
	}
	on := b.on(fmt.Sprintf("update the VM group of failure domain %s for VM %s", s.Machine.Spec.FailureDomain, b.machine.Name))
	return callError(on, b.renewing(ctx, func() error { return b.syncDomainOnce(ctx, hostGroup, vm, leaving) }))
}

func (b *backend) syncDomainOnce(ctx context.Context, hostGroup *infrav1.VCenterHostGroup, vm types.ManagedObjectReference, leaving bool) error {
	name, err := b.vmMark(ctx, vm, keyDomain)
	if err != nil || name == "" {
		return err // a VM cloned before its domain had a group carries no mark, and is in none
	}
	cluster, err := b.computeCluster(ctx, vm)
	if err != nil || cluster == nil {
		return err
	}
	if cluster.Type != "ClusterComputeResource" {
		if leaving {
			return nil
		}
		return hypervisor.Errorf(infrav1.InvalidSpecReason,
			"failure domain %q: hostGroup needs a DRS cluster: the VM's resource pool belongs to a standalone host (%s)", b.fd.Name, cluster.Value)
	}
	defer rules(b.sess).lock(b.sess.Host() + "/" + cluster.Value)()
	for attempt := 0; ; attempt++ {
		have, err := b.clusterGroups(ctx, *cluster)
		if err != nil {
			return err
		}
		var members []types.ManagedObjectReference
		if g := have.vmGroup(name); g != nil {
			members = g.Vm
		}
		// Running VMs and the group's members: a VM is powered off before it is deleted and leaves
		// the group before its destroy, so one whose delete was under way when the manager
		// restarted is not counted once it left, and DRS places a VM that is off only when it is
		// powered on, which syncs the group again.
		vms, err := b.groupVMs(ctx, *cluster, keyDomain, name, leaving, true, vm, members)
		if err != nil {
			return err
		}
		if hg := hostGroup; hg != nil && !leaving && have.hostGroup(hg.Name) == nil {
			return hypervisor.Errorf(infrav1.InvalidSpecReason,
				"failure domain %q: compute cluster %s has no DRS host group %q: create it (govc cluster.group.create -cluster <cluster> -name %q -host <hosts>) or fix spec.failureDomains[].hostGroup.name of the VCenterCluster",
				b.fd.Name, cluster.Value, hg.Name, hg.Name)
		}
		err = b.reconfigureCluster(ctx, *cluster, domainChanges(have, name, hostGroup, vms))
		// Someone else changed the groups or rules since the read: read again, once.
		if err == nil || attempt > 0 || !fault.Is(err, &types.InvalidArgument{}) {
			return err
		}
	}
}

// vmMark reads one of capwin's extraConfig marks of a VM ("" when it has none).
func (b *backend) vmMark(ctx context.Context, vm types.ManagedObjectReference, key string) (string, error) {
	var content []types.ObjectContent
	if err := property.DefaultCollector(b.sess.Client).Retrieve(ctx, []types.ManagedObjectReference{vm}, []string{extraConfigPath(key)}, &content); err != nil {
		return "", b.sess.Check(err)
	}
	for _, oc := range content {
		for _, p := range oc.PropSet {
			return optionValue(p.Val), nil
		}
	}
	return "", nil
}

// clusterGroups reads a compute cluster's DRS groups and rules.
func (b *backend) clusterGroups(ctx context.Context, cluster types.ManagedObjectReference) (clusterGroups, error) {
	var cc mo.ClusterComputeResource
	if err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, cluster, []string{"configurationEx"}, &cc); err != nil {
		return clusterGroups{}, b.sess.Check(err)
	}
	cfg, ok := cc.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if !ok {
		return clusterGroups{}, nil
	}
	return clusterGroups{groups: cfg.Group, rules: cfg.Rule}, nil
}

// reconfigureCluster applies the changes one after the other, each waited for (ruleWait).
func (b *backend) reconfigureCluster(ctx context.Context, cluster types.ManagedObjectReference, changes []*types.ClusterConfigSpecEx) error {
	for _, spec := range changes {
		if err := b.reconfigureOnce(ctx, cluster, spec); err != nil {
			return err
		}
	}
	return nil
}

func (b *backend) reconfigureOnce(ctx context.Context, cluster types.ManagedObjectReference, spec *types.ClusterConfigSpecEx) error {
	ctx, cancel := context.WithTimeout(ctx, ruleWait)
	defer cancel()
	task, err := object.NewClusterComputeResource(b.sess.Client, cluster).Reconfigure(ctx, spec, true)
	if err != nil {
		return b.sess.Check(err)
	}
	return b.sess.Check(task.Wait(ctx))
}
