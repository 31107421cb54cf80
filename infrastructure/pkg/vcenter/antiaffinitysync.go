package vcenter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// ruleWait bounds the wait for a cluster reconfigure that edits a rule: it changes configuration
// only and ends in well under a second, so it is waited for (under the cluster's lock, which a
// later read-modify-write needs) instead of being remembered in status like a VM's tasks.
const ruleWait = time.Minute

// ruleLocks serializes this manager's rule edits per compute cluster (server and cluster id): an
// edit replaces the rule's VM list, so two machines of one group powered on at once would
// otherwise each drop the other's VM.
type ruleLocks struct{ m sync.Map }

func (l *ruleLocks) lock(key string) func() {
	mu, _ := l.m.LoadOrStore(key, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// syncRule brings the anti-affinity rule of the machine's group to the group's VMs in its compute
// cluster, without leaving (the VM being destroyed; nil otherwise). It does nothing for a
// machine without a group.
func (b *backend) syncRule(ctx context.Context, s *hypervisor.Scope, leaving *types.ManagedObjectReference) error {
	name := groupRule(s, b.spec)
	if name == "" {
		return nil
	}
	err := b.renewing(ctx, func() error { return b.syncRuleOnce(ctx, name, leaving) })
	return callError(b.on(fmt.Sprintf("update the anti-affinity rule %s for VM %s", name, b.machine.Name)), err)
}

func (b *backend) syncRuleOnce(ctx context.Context, name string, leaving *types.ManagedObjectReference) error {
	cluster, err := b.computeCluster(ctx)
	if err != nil {
		return err
	}
	defer b.sess.pool.rules.lock(b.sess.host() + "/" + cluster.Value)()
	mandatory := antiAffinity(b.spec) == infrav1.AntiAffinityHard
	for attempt := 0; ; attempt++ {
		vms, err := b.groupVMs(ctx, cluster, name, leaving)
		if err != nil {
			return err
		}
		var cc mo.ClusterComputeResource
		if err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, cluster, []string{"configurationEx"}, &cc); err != nil {
			return b.sess.check(err)
		}
		var rules []types.BaseClusterRuleInfo
		if cfg, ok := cc.ConfigurationEx.(*types.ClusterConfigInfoEx); ok {
			rules = cfg.Rule
		}
		change := ruleChange(findRule(rules, name), name, vms, mandatory)
		if change == nil {
			return nil
		}
		err = b.editRule(ctx, cluster, change)
		// Someone else (another manager of the same vCenter, a person) changed the rules since the
		// read: read again, once.
		if err == nil || attempt > 0 || !fault.Is(err, &types.InvalidArgument{}) {
			return err
		}
	}
}

// computeCluster is the DRS cluster that owns the machine's resource pool.
func (b *backend) computeCluster(ctx context.Context) (types.ManagedObjectReference, error) {
	place, err := b.sess.resolve(ctx, b.where)
	if err != nil {
		return types.ManagedObjectReference{}, err
	}
	var pool mo.ResourcePool
	if err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, place.Pool, []string{"owner"}, &pool); err != nil {
		return types.ManagedObjectReference{}, b.sess.check(err)
	}
	if pool.Owner.Type != "ClusterComputeResource" {
		return types.ManagedObjectReference{}, hypervisor.Errorf(infrav1.InvalidSpecReason,
			"spec.antiAffinity needs a DRS cluster: resource pool %q belongs to the standalone host %s", b.where.Pool, pool.Owner.Value)
	}
	return pool.Owner, nil
}

// groupVMs lists the VMs of the compute cluster marked with the group's rule name (keyGroup), but
// leaving: one read through a container view.
func (b *backend) groupVMs(ctx context.Context, cluster types.ManagedObjectReference, name string, leaving *types.ManagedObjectReference) ([]types.ManagedObjectReference, error) {
	v, err := view.NewManager(b.sess.Client).CreateContainerView(ctx, cluster, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, b.sess.check(err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var content []types.ObjectContent
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{extraConfigPath(keyGroup)}, &content); err != nil {
		return nil, b.sess.check(err)
	}
	var vms []types.ManagedObjectReference
	for _, oc := range content {
		if leaving != nil && oc.Obj == *leaving {
			continue
		}
		for _, p := range oc.PropSet {
			if optionValue(p.Val) == name {
				vms = append(vms, oc.Obj)
			}
		}
	}
	return vms, nil
}

// editRule applies one rule change to the cluster and waits for it (ruleWait).
func (b *backend) editRule(ctx context.Context, cluster types.ManagedObjectReference, change *types.ClusterRuleSpec) error {
	ctx, cancel := context.WithTimeout(ctx, ruleWait)
	defer cancel()
	spec := &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{*change}}
	task, err := object.NewClusterComputeResource(b.sess.Client, cluster).Reconfigure(ctx, spec, true)
	if err != nil {
		return b.sess.check(err)
	}
	return b.sess.check(task.Wait(ctx))
}
