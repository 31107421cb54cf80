package vcenter

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// ruleWait bounds the wait for a cluster reconfigure that edits a rule: it changes configuration
// only and ends in well under a second, so it is waited for (under the cluster's lock, which a
// later read-modify-write needs) instead of being remembered in status like a VM's tasks.
const ruleWait = time.Minute

// ruleLocks serializes this manager's rule edits per compute cluster (server and cluster id): an
// edit replaces the rule's VM list, so two machines of one group powered on at once would
// otherwise each drop the other's VM. It also remembers the VMs that left their rules and groups
// (leaving): their delete task may still run when the next VM of the group leaves, and counting
// them would keep the group alive after the last VM is gone. (A VM that joined its domain's group
// to be powered on is remembered by vCenter itself: it is a member of the group, see groupVMs.)
type ruleLocks struct{ m, leaving sync.Map }

// leavingTTL bounds how long a leaving VM is remembered: its delete ends long before, and a
// retried delete marks it again.
const leavingTTL = time.Hour

// leave remembers that vm (server and id) left its rules and groups; gone reports whether it did.
func (l *ruleLocks) leave(key string) { remember(&l.leaving, key) }

func (l *ruleLocks) gone(key string) bool { _, ok := l.leaving.Load(key); return ok }

// remember stores key with the time now and forgets the keys older than leavingTTL: a delete ends
// long before, and a retried one marks the VM again.
func remember(m *sync.Map, key string) {
	now := time.Now()
	m.Store(key, now)
	m.Range(func(k, v any) bool {
		if now.Sub(v.(time.Time)) > leavingTTL {
			m.Delete(k)
		}
		return true
	})
}

// rulesKey keeps the pool's ruleLocks (session.Session.Shared): one manager's edits, whatever the
// session.
type rulesKey struct{}

// rules are the rule locks of this manager's sessions.
func rules(sess *session.Session) *ruleLocks {
	return sess.Shared(rulesKey{}, func() any { return &ruleLocks{} }).(*ruleLocks)
}

func (l *ruleLocks) lock(key string) func() {
	mu, _ := l.m.LoadOrStore(key, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// syncRule brings the anti-affinity rule of the machine's group to the group's VMs in the compute
// cluster of vm, without vm when it is leaving (about to be destroyed). It does nothing for a
// machine without a group, nor for a leaving VM outside a DRS cluster (it cannot be in a rule),
// nor for a Soft group on a standalone host.
func (b *backend) syncRule(ctx context.Context, s *hypervisor.Scope, vm types.ManagedObjectReference, leaving bool) error {
	name := groupRule(s, b.spec)
	if name == "" {
		return nil
	}
	err := b.renewing(ctx, func() error { return b.syncRuleOnce(ctx, name, vm, leaving) })
	return callError(b.on(fmt.Sprintf("update the anti-affinity rule %s for VM %s", name, b.machine.Name)), err)
}

func (b *backend) syncRuleOnce(ctx context.Context, name string, vm types.ManagedObjectReference, leaving bool) error {
	cluster, err := b.computeCluster(ctx, vm)
	if err != nil || cluster == nil {
		return err
	}
	if cluster.Type != "ClusterComputeResource" {
		// A standalone host has one host to run on: Soft ("keep apart when you can") is met by
		// doing nothing, which lets the flavors turn Soft on by default; Hard cannot be met once
		// a second VM of the group arrives, so it is refused in words at once.
		if leaving || antiAffinity(b.spec) == infrav1.AntiAffinitySoft {
			return nil
		}
		return hypervisor.Errorf(infrav1.InvalidSpecReason,
			"spec.antiAffinity Hard needs a DRS cluster: the VM's resource pool belongs to a standalone host (%s); use Soft or None there", cluster.Value)
	}
	defer rules(b.sess).lock(b.sess.Host() + "/" + cluster.Value)()
	mandatory := antiAffinity(b.spec) == infrav1.AntiAffinityHard
	for attempt := 0; ; attempt++ {
		vms, err := b.groupVMs(ctx, *cluster, keyGroup, name, leaving, false, vm, nil)
		if err != nil {
			return err
		}
		have, err := b.clusterGroups(ctx, *cluster)
		if err != nil {
			return err
		}
		change := ruleChange(findRule(have.rules, name), name, vms, mandatory)
		if change == nil {
			return nil
		}
		err = b.editRule(ctx, *cluster, change)
		// Someone else (another manager of the same vCenter, a person) changed the rules since the
		// read: read again, once.
		if err == nil || attempt > 0 || !fault.Is(err, &types.InvalidArgument{}) {
			return err
		}
	}
}

// computeCluster is the owner of the VM's resource pool: a ClusterComputeResource, or the
// ComputeResource of a standalone host (nil: the VM is in no pool, a template). It is read from
// the VM, not from the spec's placement: the template may be gone by the time the VM is deleted.
func (b *backend) computeCluster(ctx context.Context, vm types.ManagedObjectReference) (*types.ManagedObjectReference, error) {
	pc := property.DefaultCollector(b.sess.Client)
	var v mo.VirtualMachine
	if err := pc.RetrieveOne(ctx, vm, []string{"resourcePool"}, &v); err != nil || v.ResourcePool == nil {
		return nil, b.sess.Check(err)
	}
	var pool mo.ResourcePool
	if err := pc.RetrieveOne(ctx, *v.ResourcePool, []string{"owner"}, &pool); err != nil {
		return nil, b.sess.Check(err)
	}
	return &pool.Owner, nil
}

// groupVMs lists the VMs of the compute cluster whose mark key (keyGroup, keyDomain) is name, but
// vm when it is leaving and the VMs that left before (ruleLocks.leaving); with running (a domain's
// VM group), only those powered on, vm when it is not leaving (it is about to be), and the members
// the group has now (members): a VM that joined it to be powered on stays in it until it runs,
// even when a restart of the manager came between its join and its power-on. One read through a
// container view.
func (b *backend) groupVMs(ctx context.Context, cluster types.ManagedObjectReference, key, name string, leaving, running bool, vm types.ManagedObjectReference, members []types.ManagedObjectReference) ([]types.ManagedObjectReference, error) {
	v, err := view.NewManager(b.sess.Client).CreateContainerView(ctx, cluster, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, b.sess.Check(err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var content []types.ObjectContent
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{extraConfigPath(key), "runtime.powerState"}, &content); err != nil {
		return nil, b.sess.Check(err)
	}
	var vms []types.ManagedObjectReference
	locks, at := rules(b.sess), func(ref types.ManagedObjectReference) string { return b.sess.Host() + "/" + ref.Value }
	if leaving {
		locks.leave(at(vm))
	}
	for _, oc := range content {
		if (leaving && oc.Obj == vm) || locks.gone(at(oc.Obj)) {
			continue
		}
		marked, on := false, false
		for _, p := range oc.PropSet {
			switch p.Name {
			case extraConfigPath(key):
				marked = optionValue(p.Val) == name
			case "runtime.powerState":
				on = powerState(p.Val) == hypervisor.PoweredOn
			}
		}
		if marked && (!running || on || (!leaving && oc.Obj == vm) || slices.Contains(members, oc.Obj)) {
			vms = append(vms, oc.Obj)
		}
	}
	return vms, nil
}

// editRule applies one rule change to the cluster and waits for it (ruleWait).
func (b *backend) editRule(ctx context.Context, cluster types.ManagedObjectReference, change *types.ClusterRuleSpec) error {
	return b.reconfigureOnce(ctx, cluster, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{*change}})
}
