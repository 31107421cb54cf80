package vcenter

import (
	"context"
	"fmt"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// domainCluster is a VCenterCluster with one failure domain, fd, in vcsim's DRS cluster.
func domainCluster(fd infrav1.VCenterFailureDomain) *infrav1.VCenterCluster {
	fd.Placement.ResourcePool = vcsimCluster + "/Resources"
	return &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"},
		Spec: infrav1.VCenterClusterSpec{Datacenter: "DC0", FailureDomains: []infrav1.VCenterFailureDomain{fd}}}
}

// domainMachine is the backend and scope of a machine of vc's first failure domain, as
// Provider.Backend builds them (placementFor, the domain).
func domainMachine(t *testing.T, sess *session.Session, vc *infrav1.VCenterCluster, name, uid string, sp *infrav1.VCenterMachineSpec) (*backend, *hypervisor.Scope) {
	t.Helper()
	sp.Template = "DC0_H0_VM0"
	b, s := vcsimMachine(t, sess, name, uid, sp)
	fd := vc.Spec.FailureDomains[0].Name
	b.where = placementFor(vc, s.InfraMachine.(*infrav1.VCenterMachine), fd)
	b.fd = vc.Spec.FailureDomain(fd)
	s.Cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "cluster-uid"}}
	s.Machine = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: clusterv1.MachineSpec{FailureDomain: fd}}
	return b, s
}

// cloned creates the machine's VM and finds it.
func cloned(t *testing.T, b *backend, s *hypervisor.Scope) *hypervisor.VM {
	t.Helper()
	g := NewWithT(t)
	ref, err := b.Create(context.Background(), s, recorded{})
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
	vm, err := b.Find(context.Background(), s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vm).NotTo(BeNil())
	return vm
}

// run waits for a task started by a backend call.
func run(t *testing.T, b *backend, s *hypervisor.Scope, ref string, err error) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
}

// TestFailureDomainNetworksVcsim: a domain's networks replace the machine's by position: the
// clone's first NIC is backed by the domain's distributed port group, its second keeps the
// machine's own network. A domain naming more networks than the machine has NICs is refused.
func TestFailureDomainNetworksVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	vc := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-a", Networks: []string{"DC0_DVPG0"}})
	sp := spec(func(s *infrav1.VCenterMachineSpec) {
		s.Network = []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}, {NetworkName: "VM Network", DHCP4: true}}
	})
	b, s := domainMachine(t, sess, vc, "win-fd-net", "6c1f0b6e-0000-4000-8000-0000000000f1", sp)
	s.NICs = append(s.NICs, s.NICs[0])
	vm := cloned(t, b, s)

	pg, err := find.NewFinder(sess.Client).SetDatacenter(b.dc).Network(ctx, "DC0_DVPG0")
	g.Expect(err).NotTo(HaveOccurred())
	var dvpg mo.DistributedVirtualPortgroup
	g.Expect(object.NewCommon(sess.Client, pg.Reference()).Properties(ctx, pg.Reference(), []string{"key"}, &dvpg)).To(Succeed())
	devices, err := object.NewVirtualMachine(sess.Client, vmRef(vm.Ref.ID)).Device(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	nics := devices.SelectByType((*types.VirtualEthernetCard)(nil))
	g.Expect(nics).To(HaveLen(2))
	first := nics[0].GetVirtualDevice().Backing
	g.Expect(first).To(BeAssignableToTypeOf(&types.VirtualEthernetCardDistributedVirtualPortBackingInfo{}))
	g.Expect(first.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo).Port.PortgroupKey).To(Equal(dvpg.Key))
	second := nics[1].GetVirtualDevice().Backing
	g.Expect(second).To(BeAssignableToTypeOf(&types.VirtualEthernetCardNetworkBackingInfo{}))
	g.Expect(second.(*types.VirtualEthernetCardNetworkBackingInfo).DeviceName).To(Equal("VM Network"))

	wide := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-b", Networks: []string{"DC0_DVPG0", "VM Network", "VM Network"}})
	b2, s2 := domainMachine(t, sess, wide, "win-fd-wide", "6c1f0b6e-0000-4000-8000-0000000000f2", spec(nil))
	_, err = b2.Create(ctx, s2, recorded{})
	g.Expect(err).To(HaveOccurred())
	g.Expect(hypervisor.Reason(err)).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(err.Error()).To(ContainSubstring(`failure domain "rack-b" names 3 networks, the machine has 1 NICs`))
}

// vcsimHostGroup creates a DRS host group of every host of vcsim's cluster: the administrator's.
func vcsimHostGroup(t *testing.T, sess *session.Session, name string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	cc, err := find.NewFinder(sess.Client).ClusterComputeResource(ctx, vcsimCluster)
	g.Expect(err).NotTo(HaveOccurred())
	hosts, err := cc.Hosts(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	var refs []types.ManagedObjectReference
	for _, h := range hosts {
		refs = append(refs, h.Reference())
	}
	task, err := cc.Reconfigure(ctx, &types.ClusterConfigSpecEx{GroupSpec: []types.ClusterGroupSpec{{
		ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
		Info:            &types.ClusterHostGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: name}, Host: refs[:2]},
	}}}, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(ctx)).To(Succeed())
}

// vcsimGroups reads the DRS groups and rules of vcsim's cluster.
func vcsimGroups(g Gomega, sess *session.Session) clusterGroups {
	ctx := context.Background()
	cc, err := find.NewFinder(sess.Client).ClusterComputeResource(ctx, vcsimCluster)
	g.Expect(err).NotTo(HaveOccurred())
	var c mo.ClusterComputeResource
	g.Expect(cc.Properties(ctx, cc.Reference(), []string{"configurationEx"}, &c)).To(Succeed())
	cfg := c.ConfigurationEx.(*types.ClusterConfigInfoEx)
	return clusterGroups{groups: cfg.Group, rules: cfg.Rule}
}

// startInDomain clones a machine of vc's failure domain and powers it on (PowerOn puts it in the
// domain's VM group first).
func startInDomain(t *testing.T, sess *session.Session, vc *infrav1.VCenterCluster, name, uid string) aaMachine {
	t.Helper()
	b, s := domainMachine(t, sess, vc, name, uid, spec(nil))
	vm := cloned(t, b, s)
	NewWithT(t).Expect(vm.Power).To(Equal(hypervisor.PoweredOff), "a VM of a domain with a hostGroup is cloned powered off, so DRS places it by the rule")
	ref, err := b.PowerOn(context.Background(), s, vm)
	run(t, b, s, ref, err)
	return aaMachine{b, s, vm}
}

// TestFailureDomainHostGroupVcsim: the VMs of a domain with a hostGroup (Must) are kept in one VM
// group tied to the administrator's host group by a mandatory VM-Host rule; deleting them takes
// them out and the last one removes the group and the rule (the host group stays). A domain
// naming a host group the cluster lacks is refused with words, and its VM stays off; a domain
// whose hostGroup was dropped loses its group and rule with its next deleted VM.
func TestFailureDomainHostGroupVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	vcsimHostGroup(t, sess, "rack-a-hosts")
	vc := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-a", HostGroup: &infrav1.VCenterHostGroup{Name: "rack-a-hosts", Mode: infrav1.HostGroupMust}})

	m1 := startInDomain(t, sess, vc, "win-fd-1", "6c1f0b6e-0000-4000-8000-0000000000f3")
	m2 := startInDomain(t, sess, vc, "win-fd-2", "6c1f0b6e-0000-4000-8000-0000000000f4")
	name := domainGroup(m1.s, m1.b.fd)
	g.Expect(len(name)).To(BeNumerically("<=", maxRuleName))
	have := vcsimGroups(g, sess)
	g.Expect(have.vmGroup(name)).NotTo(BeNil())
	g.Expect(vmIDs(have.vmGroup(name).Vm)).To(ConsistOf(m1.vm.Ref.ID, m2.vm.Ref.ID))
	rule := have.vmHostRule(name)
	g.Expect(rule).NotTo(BeNil())
	g.Expect(rule.VmGroupName).To(Equal(name))
	g.Expect(rule.AffineHostGroupName).To(Equal("rack-a-hosts"))
	g.Expect(*rule.Mandatory).To(BeTrue())
	g.Expect(*rule.Enabled).To(BeTrue())

	// PowerOn again changes nothing.
	g.Expect(m1.b.syncDomain(ctx, m1.s, vmRef(m1.vm.Ref.ID), false)).To(Succeed())
	g.Expect(vcsimGroups(g, sess).vmHostRule(name).RuleUuid).To(Equal(rule.RuleUuid))

	m1.destroy(t)
	have = vcsimGroups(g, sess)
	g.Expect(vmIDs(have.vmGroup(name).Vm)).To(ConsistOf(m2.vm.Ref.ID))
	g.Expect(have.vmHostRule(name)).NotTo(BeNil())
	m2.destroy(t)
	have = vcsimGroups(g, sess)
	g.Expect(have.vmGroup(name)).To(BeNil(), "the last VM out removes the VM group")
	g.Expect(have.vmHostRule(name)).To(BeNil(), "and its rule")
	g.Expect(have.hostGroup("rack-a-hosts")).NotTo(BeNil(), "the host group is the administrator's")

	// A host group the cluster lacks: InvalidSpec in words, the VM stays off; it can be deleted.
	missing := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-b", HostGroup: &infrav1.VCenterHostGroup{Name: "nope"}})
	b, s := domainMachine(t, sess, missing, "win-fd-missing", "6c1f0b6e-0000-4000-8000-0000000000f5", spec(nil))
	vm := cloned(t, b, s)
	_, err := b.PowerOn(ctx, s, vm)
	g.Expect(err).To(HaveOccurred())
	g.Expect(hypervisor.Reason(err)).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(err.Error()).To(ContainSubstring(`has no DRS host group "nope"`))
	vm, err = b.Find(ctx, s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vm.Power).To(Equal(hypervisor.PoweredOff))
	ref, err := b.Destroy(ctx, s, vm)
	run(t, b, s, ref, err)

	// A domain removed from the VCenterCluster (or its hostGroup dropped): the domain's next
	// deleted VM removes its group and rule, found by the VM's mark.
	m3 := startInDomain(t, sess, vc, "win-fd-3", "6c1f0b6e-0000-4000-8000-0000000000f6")
	m4 := startInDomain(t, sess, vc, "win-fd-4", "6c1f0b6e-0000-4000-8000-0000000000f7")
	g.Expect(vmIDs(vcsimGroups(g, sess).vmGroup(name).Vm)).To(ConsistOf(m3.vm.Ref.ID, m4.vm.Ref.ID))
	m3.b.fd = nil
	m3.destroy(t)
	have = vcsimGroups(g, sess)
	g.Expect(have.vmGroup(name)).To(BeNil())
	g.Expect(have.vmHostRule(name)).To(BeNil())
	m4.b.fd.HostGroup = nil
	m4.destroy(t)
	g.Expect(vcsimGroups(g, sess).groups).To(HaveLen(1), "only the administrator's host group is left")
	g.Expect(vcsimGroups(g, sess).rules).To(BeEmpty())

	// A VM powered off for its delete (by a manager that restarted since) stays in the group
	// until its Destroy takes it out: the other VM's delete keeps the group for it, its own
	// removes the group.
	vc.Spec.FailureDomains[0].HostGroup = &infrav1.VCenterHostGroup{Name: "rack-a-hosts"}
	m5 := startInDomain(t, sess, vc, "win-fd-5", "6c1f0b6e-0000-4000-8000-0000000000fa")
	m6 := startInDomain(t, sess, vc, "win-fd-6", "6c1f0b6e-0000-4000-8000-0000000000fb")
	g.Expect(vmIDs(vcsimGroups(g, sess).vmGroup(name).Vm)).To(ConsistOf(m5.vm.Ref.ID, m6.vm.Ref.ID))
	ref, err = m5.b.PowerOff(ctx, m5.s, m5.vm, true)
	run(t, m5.b, m5.s, ref, err)
	m6.destroy(t)
	g.Expect(vmIDs(vcsimGroups(g, sess).vmGroup(name).Vm)).To(ConsistOf(m5.vm.Ref.ID))
	ref, err = m5.b.Destroy(ctx, m5.s, m5.vm)
	run(t, m5.b, m5.s, ref, err)
	g.Expect(vcsimGroups(g, sess).groups).To(HaveLen(1))
	g.Expect(vcsimGroups(g, sess).rules).To(BeEmpty())
}

// TestFailureDomainTagsVcsim: a VM of a domain with a zone and a region is cloned powered off and
// gets both tags besides its spec.tags, all reported with their ids; destroying it leaves it none.
func TestFailureDomainTagsVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	zone, region := infrav1.VCenterTag{Category: "k8s-zone", Name: "rack-a"}, infrav1.VCenterTag{Category: "k8s-region", Name: "dc-west"}
	daily := infrav1.VCenterTag{Category: "backup", Name: "daily"}
	ids := vcsimTags(t, sess, []string{"k8s-zone", "k8s-region"}, nil, zone, region, daily)
	vc := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-a", Zone: &zone, Region: &region})
	b, s := domainMachine(t, sess, vc, "win-fd-tags", "6c1f0b6e-0000-4000-8000-0000000000f8",
		spec(func(s *infrav1.VCenterMachineSpec) { s.Tags = []infrav1.VCenterTag{daily} }))
	vm := cloned(t, b, s)
	g.Expect(vm.Power).To(Equal(hypervisor.PoweredOff), "the clone task leaves a VM with tags to attach off")

	got, err := b.Tag(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal([]infrav1.VCenterTagStatus{
		{Category: "backup", Name: "daily", ID: ids["backup/daily"]},
		{Category: "k8s-zone", Name: "rack-a", ID: ids["k8s-zone/rack-a"]},
		{Category: "k8s-region", Name: "dc-west", ID: ids["k8s-region/dc-west"]},
	}))
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(ConsistOf(ids["backup/daily"], ids["k8s-zone/rack-a"], ids["k8s-region/dc-west"]))
	s.InfraMachine.GetMachineStatus().Tags = got
	again, err := b.Tag(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(got), "status reports them all: no call")

	ref, err := b.Destroy(ctx, s, vm)
	run(t, b, s, ref, err)
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(BeEmpty())

	// A zone tag vCenter lacks is an InvalidSpec error naming the domain.
	lost := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-z", Zone: &infrav1.VCenterTag{Category: "k8s-zone", Name: "rack-z"}, Region: &region})
	b, s = domainMachine(t, sess, lost, "win-fd-lost", "6c1f0b6e-0000-4000-8000-0000000000f9", spec(nil))
	vm = cloned(t, b, s)
	_, err = b.Tag(ctx, s, vm)
	g.Expect(hypervisor.Reason(err)).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(err.Error()).To(ContainSubstring("zone and region of failure domain rack-z"))
	g.Expect(err.Error()).To(ContainSubstring(`the zone or region of failure domain rack-z: tag category "k8s-zone" has no tag "rack-z"`))
}

// TestFailureDomainJoinBeforePowerOn: a VM that joined its domain's group but whose power-on has
// not run yet stays in the group when a second VM of the domain joins in between (a group counts
// running VMs and its members, and the first one is still off), also when the manager restarted
// between the two (a new session cache); it leaves with its delete.
func TestFailureDomainJoinBeforePowerOn(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			server := startVcsim(t)
			sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, server)
			vcsimHostGroup(t, sess, "rack-a-hosts")
			vc := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-a", HostGroup: &infrav1.VCenterHostGroup{Name: "rack-a-hosts"}})
			b1, s1 := domainMachine(t, sess, vc, "win-fd-j1", "6c1f0b6e-0000-4000-8000-000000000301", spec(nil))
			vm1 := cloned(t, b1, s1)
			g.Expect(b1.syncDomain(ctx, s1, vmRef(vm1.Ref.ID), false)).To(Succeed(), "what PowerOn does before its task")
			if restart {
				sess = vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, server)
			}
			m2 := startInDomain(t, sess, vc, "win-fd-j2", "6c1f0b6e-0000-4000-8000-000000000302")
			name := domainGroup(s1, b1.fd)
			g.Expect(vmIDs(vcsimGroups(g, sess).vmGroup(name).Vm)).To(ConsistOf(vm1.Ref.ID, m2.vm.Ref.ID))

			ref, err := b1.Destroy(ctx, s1, vm1)
			run(t, b1, s1, ref, err)
			g.Expect(vmIDs(vcsimGroups(g, sess).vmGroup(name).Vm)).To(ConsistOf(m2.vm.Ref.ID))
		})
	}
}

// TestFailureDomainHostGroupConcurrent: four VMs of one domain powered on at once all end in its
// VM group (edits are serialized per compute cluster), and deleting them at once leaves no group
// and no rule.
func TestFailureDomainHostGroupConcurrent(t *testing.T) {
	g := NewWithT(t)
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	vcsimHostGroup(t, sess, "rack-a-hosts")
	var ms []aaMachine
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 4 {
		wg.Go(func() {
			vc := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-a", HostGroup: &infrav1.VCenterHostGroup{Name: "rack-a-hosts"}})
			m := startInDomain(t, sess, vc, fmt.Sprintf("win-fd-c%d", i), fmt.Sprintf("6c1f0b6e-0000-4000-8000-0000000002%02d", i))
			mu.Lock()
			ms = append(ms, m)
			mu.Unlock()
		})
	}
	wg.Wait()
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.vm.Ref.ID)
	}
	have := vcsimGroups(g, sess)
	name := domainGroup(ms[0].s, ms[0].b.fd)
	g.Expect(vmIDs(have.vmGroup(name).Vm)).To(ConsistOf(ids))
	g.Expect(*have.vmHostRule(name).Mandatory).To(BeFalse(), "Should is the default")
	for _, m := range ms {
		wg.Go(func() { m.destroy(t) })
	}
	wg.Wait()
	have = vcsimGroups(g, sess)
	g.Expect(have.groups).To(HaveLen(1), "only the administrator's host group is left")
	g.Expect(have.rules).To(BeEmpty())
}
