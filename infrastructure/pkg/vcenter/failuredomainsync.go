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

// syncDomain brings the VM group and VM-Host rule of the machine's failure domain to the domain's
// VMs in the compute cluster of vm, without vm when it is leaving (about to be destroyed). A VM
// that is not leaving is synced only when its domain has a hostGroup; a leaving one always, so a
// hostGroup dropped from the spec leaves no group behind.
func (b *backend) syncDomain(ctx context.Context, s *hypervisor.Scope, vm types.ManagedObjectReference, leaving bool) error {
	name := domainGroup(s, b.fd)
	if name == "" || (!leaving && b.fd.HostGroup == nil) {
		return nil
	}
	err := b.renewing(ctx, func() error { return b.syncDomainOnce(ctx, name, vm, leaving) })
	return callError(b.on(fmt.Sprintf("update the VM group %s of failure domain %s for VM %s", name, b.fd.Name, b.machine.Name)), err)
}

func (b *backend) syncDomainOnce(ctx context.Context, name string, vm types.ManagedObjectReference, leaving bool) error {
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
	defer b.sess.pool.rules.lock(b.sess.host() + "/" + cluster.Value)()
	for attempt := 0; ; attempt++ {
		vms, err := b.groupVMs(ctx, *cluster, keyDomain, name, leaving, vm)
		if err != nil {
			return err
		}
		have, err := b.clusterGroups(ctx, *cluster)
		if err != nil {
			return err
		}
		if hg := b.fd.HostGroup; hg != nil && !leaving && have.hostGroup(hg.Name) == nil {
			return hypervisor.Errorf(infrav1.InvalidSpecReason,
				"failure domain %q: compute cluster %s has no DRS host group %q: create it (govc cluster.group.create -cluster <cluster> -name %q -host <hosts>) or fix spec.failureDomains[].hostGroup.name of the VCenterCluster",
				b.fd.Name, cluster.Value, hg.Name, hg.Name)
		}
		err = b.reconfigureCluster(ctx, *cluster, domainChanges(have, name, b.fd.HostGroup, vms))
		// Someone else changed the groups or rules since the read: read again, once.
		if err == nil || attempt > 0 || !fault.Is(err, &types.InvalidArgument{}) {
			return err
		}
	}
}

// clusterGroups reads a compute cluster's DRS groups and rules.
func (b *backend) clusterGroups(ctx context.Context, cluster types.ManagedObjectReference) (clusterGroups, error) {
	var cc mo.ClusterComputeResource
	if err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, cluster, []string{"configurationEx"}, &cc); err != nil {
		return clusterGroups{}, b.sess.check(err)
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
		return b.sess.check(err)
	}
	return b.sess.check(task.Wait(ctx))
}
