package vcenter

import (
	"context"
	"fmt"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// vcsimCluster is vcsim's DRS cluster (VPX model).
const vcsimCluster = "/DC0/host/DC0_C0"

// aaMachine is one powered-on VM of a group in vcsim's DRS cluster: cloned, then PowerOn (which
// puts it in the rule).
type aaMachine struct {
	b  *backend
	s  *hypervisor.Scope
	vm *hypervisor.VM
}

func startGrouped(t *testing.T, sess *session.Session, name, uid string, labels map[string]string, mode infrav1.AntiAffinityMode) aaMachine {
	t.Helper()
	return startIn(t, sess, vcsimCluster+"/Resources", name, uid, labels, mode)
}

// startStandalone is startGrouped in the pool of vcsim's standalone host.
func startStandalone(t *testing.T, sess *session.Session, name, uid string, labels map[string]string, mode infrav1.AntiAffinityMode) aaMachine {
	t.Helper()
	return startIn(t, sess, "", name, uid, labels, mode)
}

// startIn clones and powers on a VM of a group in pool ("": the default spec's, a standalone host).
func startIn(t *testing.T, sess *session.Session, pool, name, uid string, labels map[string]string, mode infrav1.AntiAffinityMode) aaMachine {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	sp := spec(func(s *infrav1.VCenterMachineSpec) {
		s.Template, s.AntiAffinity = "DC0_H0_VM0", &infrav1.VCenterAntiAffinity{Mode: mode}
	})
	b, s := vcsimMachine(t, sess, name, uid, sp)
	if pool != "" {
		b.where.Pool = pool
	}
	s.Cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "cluster-uid"}}
	s.Machine = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels}}
	ref, err := b.Create(ctx, s, recorded{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, b, s, ref).State).To(Equal(hypervisor.TaskSucceeded))
	vm, err := b.Find(ctx, s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vm.Power).To(Equal(hypervisor.PoweredOff), "a VM of a group is cloned powered off, so DRS places it by the rule")
	ref, err = b.PowerOn(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, b, s, ref).State).To(Equal(hypervisor.TaskSucceeded))
	return aaMachine{b, s, vm}
}

// destroy powers the VM off and destroys it (Destroy takes it out of the rule first).
func (m aaMachine) destroy(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ref, err := m.b.PowerOff(context.Background(), m.s, m.vm, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, m.b, m.s, ref).State).To(Equal(hypervisor.TaskSucceeded))
	ref, err = m.b.Destroy(context.Background(), m.s, m.vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, m.b, m.s, ref).State).To(Equal(hypervisor.TaskSucceeded))
}

// vcsimRules are the anti-affinity rules of vcsim's DRS cluster by name.
func vcsimRules(g Gomega, sess *session.Session) map[string]*types.ClusterAntiAffinityRuleSpec {
	ctx := context.Background()
	cc, err := find.NewFinder(sess.Client).ClusterComputeResource(ctx, vcsimCluster)
	g.Expect(err).NotTo(HaveOccurred())
	var c mo.ClusterComputeResource
	g.Expect(cc.Properties(ctx, cc.Reference(), []string{"configurationEx"}, &c)).To(Succeed())
	out := map[string]*types.ClusterAntiAffinityRuleSpec{}
	for _, r := range c.ConfigurationEx.(*types.ClusterConfigInfoEx).Rule {
		if aa, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok {
			out[aa.Name] = aa
		}
	}
	return out
}

func vmIDs(refs []types.ManagedObjectReference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Value)
	}
	return out
}

// TestAntiAffinityVcsim: two VMs of one MachineDeployment (Hard) get one mandatory rule with both;
// a third group member joins it; a second MachineDeployment (Soft) gets its own non-mandatory
// rule; deleting VMs takes them out, the rule goes with the last but one, and deleting every VM
// leaves no rule. On a standalone host's pool Soft makes no rule and Hard is refused with words.
func TestAntiAffinityVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	md := func(n string) map[string]string { return map[string]string{clusterv1.MachineDeploymentNameLabel: n} }

	a1 := startGrouped(t, sess, "md-a-1", "6c1f0b6e-0000-4000-8000-0000000000a1", md("a"), infrav1.AntiAffinityHard)
	g.Expect(vcsimRules(g, sess)).To(BeEmpty(), "one VM makes no rule")
	a2 := startGrouped(t, sess, "md-a-2", "6c1f0b6e-0000-4000-8000-0000000000a2", md("a"), infrav1.AntiAffinityHard)
	name := groupRule(a1.s, a1.b.spec)
	g.Expect(len(name)).To(BeNumerically("<=", maxRuleName))
	rules := vcsimRules(g, sess)
	g.Expect(rules).To(HaveLen(1))
	g.Expect(rules).To(HaveKey(name))
	g.Expect(*rules[name].Mandatory).To(BeTrue())
	g.Expect(vmIDs(rules[name].Vm)).To(ConsistOf(a1.vm.Ref.ID, a2.vm.Ref.ID))

	a3 := startGrouped(t, sess, "md-a-3", "6c1f0b6e-0000-4000-8000-0000000000a3", md("a"), infrav1.AntiAffinityHard)
	b1 := startGrouped(t, sess, "md-b-1", "6c1f0b6e-0000-4000-8000-0000000000b1", md("b"), infrav1.AntiAffinitySoft)
	b2 := startGrouped(t, sess, "md-b-2", "6c1f0b6e-0000-4000-8000-0000000000b2", md("b"), infrav1.AntiAffinitySoft)
	rules = vcsimRules(g, sess)
	g.Expect(rules).To(HaveLen(2))
	g.Expect(vmIDs(rules[name].Vm)).To(ConsistOf(a1.vm.Ref.ID, a2.vm.Ref.ID, a3.vm.Ref.ID))
	soft := rules[groupRule(b1.s, b1.b.spec)]
	g.Expect(soft).NotTo(BeNil())
	g.Expect(*soft.Mandatory).To(BeFalse())
	g.Expect(vmIDs(soft.Vm)).To(ConsistOf(b1.vm.Ref.ID, b2.vm.Ref.ID))

	// PowerOn again (a VM powered off by someone) changes nothing.
	g.Expect(a1.b.syncRule(context.Background(), a1.s, vmRef(a1.vm.Ref.ID), false)).To(Succeed())
	g.Expect(vcsimRules(g, sess)[name].RuleUuid).To(Equal(rules[name].RuleUuid))

	a2.destroy(t)
	g.Expect(vmIDs(vcsimRules(g, sess)[name].Vm)).To(ConsistOf(a1.vm.Ref.ID, a3.vm.Ref.ID))
	a3.destroy(t)
	g.Expect(vcsimRules(g, sess)).NotTo(HaveKey(name), "a rule of one VM constrains nothing: it goes")
	a1.destroy(t)
	b1.destroy(t)
	b2.destroy(t)
	g.Expect(vcsimRules(g, sess)).To(BeEmpty(), "no rule outlives its MachineDeployment")

	// A Soft VM of a standalone host's pool powers on without a rule (the flavors' default must
	// work there); a Hard one cannot power on in a rule: InvalidSpec in words. It can be deleted
	// (the template may be gone by then: the cluster is read from the VM).
	for i, uid := range []string{"6c1f0b6e-0000-4000-8000-0000000000c2", "6c1f0b6e-0000-4000-8000-0000000000c3"} {
		defer startStandalone(t, sess, fmt.Sprintf("alone-soft-%d", i), uid, md("s"), infrav1.AntiAffinitySoft).destroy(t)
	}
	g.Expect(vcsimRules(g, sess)).To(BeEmpty(), "Soft on a standalone host makes no rule")
	alone, s := vcsimMachine(t, sess, "alone", "6c1f0b6e-0000-4000-8000-0000000000c1", spec(func(s *infrav1.VCenterMachineSpec) {
		s.Template, s.AntiAffinity = "DC0_H0_VM0", &infrav1.VCenterAntiAffinity{Mode: infrav1.AntiAffinityHard}
	}))
	s.Machine = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: md("c")}}
	ref, err := alone.Create(ctx, s, recorded{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, alone, s, ref).State).To(Equal(hypervisor.TaskSucceeded))
	vm, err := alone.Find(ctx, s)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = alone.PowerOn(ctx, s, vm)
	g.Expect(hypervisor.Reason(err)).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(err.Error()).To(ContainSubstring("needs a DRS cluster"))
	alone.where.Template = "gone"
	forget(alone.sess)
	ref, err = alone.Destroy(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, alone, s, ref).State).To(Equal(hypervisor.TaskSucceeded))
}

// TestAntiAffinityConcurrent: machines of one group powered on at once all end in one rule (the
// edits are serialized per compute cluster: none drops another's VM, none adds a second rule).
func TestAntiAffinityConcurrent(t *testing.T) {
	g := NewWithT(t)
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	labels := map[string]string{clusterv1.MachineDeploymentNameLabel: "p"}
	var ms []aaMachine
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 4 {
		wg.Go(func() {
			m := startGrouped(t, sess, fmt.Sprintf("md-p-%d", i), fmt.Sprintf("6c1f0b6e-0000-4000-8000-0000000001%02d", i), labels, infrav1.AntiAffinityHard)
			mu.Lock()
			ms = append(ms, m)
			mu.Unlock()
		})
	}
	wg.Wait()
	rules := vcsimRules(g, sess)
	g.Expect(rules).To(HaveLen(1))
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.vm.Ref.ID)
	}
	g.Expect(vmIDs(rules[groupRule(ms[0].s, ms[0].b.spec)].Vm)).To(ConsistOf(ids))
	for _, m := range ms {
		wg.Go(func() { m.destroy(t) })
	}
	wg.Wait()
	g.Expect(vcsimRules(g, sess)).To(BeEmpty())
}

// TestGroupRule: the rule's name comes from the Machine's group (MachineDeployment, control
// plane, MachineSet) and the Cluster, is cut to 80 characters, and is "" without a mode or group.
func TestGroupRule(t *testing.T) {
	g := NewWithT(t)
	scope := func(labels map[string]string, cluster string) *hypervisor.Scope {
		return &hypervisor.Scope{
			Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: cluster, UID: k8stypes.UID("u-" + cluster)}},
			Machine: &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		}
	}
	hard := spec(func(s *infrav1.VCenterMachineSpec) {
		s.AntiAffinity = &infrav1.VCenterAntiAffinity{Mode: infrav1.AntiAffinityHard}
	})
	mdA := map[string]string{clusterv1.MachineDeploymentNameLabel: "a", clusterv1.MachineSetNameLabel: "a-x"}
	g.Expect(groupRule(scope(mdA, "c"), hard)).To(MatchRegexp(`^capwin-ns-c-md-a-[0-9a-f]{10}$`))
	g.Expect(groupRule(scope(mdA, "c"), spec(nil))).To(BeEmpty())
	g.Expect(groupRule(scope(nil, "c"), hard)).To(BeEmpty())
	g.Expect(groupRule(scope(map[string]string{clusterv1.MachineControlPlaneLabel: ""}, "c"), hard)).To(MatchRegexp(`^capwin-ns-c-cp-`))
	g.Expect(groupRule(scope(map[string]string{clusterv1.MachineControlPlaneNameLabel: "kcp"}, "c"), hard)).To(MatchRegexp(`^capwin-ns-c-cp-kcp-`))
	long := groupRule(scope(map[string]string{clusterv1.MachineDeploymentNameLabel: string(make([]byte, 100))}, "c"), hard)
	g.Expect(long).To(HaveLen(maxRuleName))
	g.Expect(groupRule(scope(mdA, "c"), hard)).NotTo(Equal(groupRule(scope(mdA, "d"), hard)))
}
