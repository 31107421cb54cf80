package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// drsCluster is vcsim's DRS cluster.
const drsCluster = "/DC0/host/DC0_C0"

// drsGroups reads the DRS VM groups and VM-Host rules of vcsim's cluster, by name.
func drsGroups(g Gomega, c *vim25.Client) (map[string]*types.ClusterVmGroup, map[string]*types.ClusterVmHostRuleInfo) {
	cc, err := find.NewFinder(c).ClusterComputeResource(ctx, drsCluster)
	g.Expect(err).NotTo(HaveOccurred())
	var m mo.ClusterComputeResource
	g.Expect(cc.Properties(ctx, cc.Reference(), []string{"configurationEx"}, &m)).To(Succeed())
	cfg := m.ConfigurationEx.(*types.ClusterConfigInfoEx)
	groups, rules := map[string]*types.ClusterVmGroup{}, map[string]*types.ClusterVmHostRuleInfo{}
	for _, gr := range cfg.Group {
		if v, ok := gr.(*types.ClusterVmGroup); ok {
			groups[v.Name] = v
		}
	}
	for _, r := range cfg.Rule {
		if v, ok := r.(*types.ClusterVmHostRuleInfo); ok {
			rules[v.Name] = v
		}
	}
	return groups, rules
}

// TestFailureDomain: a Machine whose failureDomain names a VCenterCluster domain with a
// hostGroup, a zone and a region gets a VM in the domain's pool, in a VM group tied to the host
// group by a VM-Host rule before its first power-on, with the zone and region tags reported in
// status.tags; deleting it removes the group and the rule. A domain naming a host group the
// cluster lacks keeps the VM off with InvalidSpec.
func TestFailureDomain(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	c := vc(g)
	cc, err := find.NewFinder(c).ClusterComputeResource(ctx, drsCluster)
	g.Expect(err).NotTo(HaveOccurred())
	hosts, err := cc.Hosts(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	// vCenter's groups and tag categories outlive the test: this run's have names of their own.
	run := randSuffix()
	hostGroup, zone, region := "capwin-test-fd-hosts-"+run, "capwin-test-zone-"+run, "capwin-test-region-"+run
	task, err := cc.Reconfigure(ctx, &types.ClusterConfigSpecEx{GroupSpec: []types.ClusterGroupSpec{{
		ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
		Info: &types.ClusterHostGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: hostGroup},
			Host: []types.ManagedObjectReference{hosts[0].Reference()}},
	}}}, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(ctx)).To(Succeed())
	rc := rest.NewClient(c)
	g.Expect(rc.Login(ctx, vcsim.URL.User)).To(Succeed())
	tm := tags.NewManager(rc)
	ids := map[string]string{}
	for cat, name := range map[string]string{zone: "rack-a", region: "west"} {
		catID, err := tm.CreateCategory(ctx, &tags.Category{Name: cat, Cardinality: "SINGLE", AssociableTypes: []string{"VirtualMachine"}})
		g.Expect(err).NotTo(HaveOccurred())
		ids[cat], err = tm.CreateTag(ctx, &tags.Tag{Name: name, CategoryID: catID})
		g.Expect(err).NotTo(HaveOccurred())
	}

	domain := func(hostGroup string) func(*infrav1.VCenterClusterSpec) {
		return func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "rack-a", Placement: infrav1.Placement{ResourcePool: drsCluster + "/Resources"},
				HostGroup: &infrav1.VCenterHostGroup{Name: hostGroup, Mode: infrav1.HostGroupMust},
				Zone:      &infrav1.VCenterTag{Category: zone, Name: "rack-a"}, Region: &infrav1.VCenterTag{Category: region, Name: "west"}}}
		}
	}
	f := newNamespace(t, watchFilter, nil)
	f.addIdentitySecret(t, f.ns, "vcenter-identity", vcsim.URL.User.Username())
	f.addCluster(t, "win", domain(hostGroup))
	f.failureDomain = "rack-a"
	f.addMachine(t, "win-md-0-fd-"+randSuffix(), userData, defaultSpec())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.Tags).To(Equal([]infrav1.VCenterTagStatus{
		{Category: zone, Name: "rack-a", ID: ids[zone]},
		{Category: region, Name: "west", ID: ids[region]},
	}))
	vms := vmsWithUUID(g, c, string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	g.Expect(vms[0].Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOn))
	groups, rules := drsGroups(g, c)
	var name string
	for n, gr := range groups {
		if len(gr.Vm) == 1 && gr.Vm[0] == vms[0].Self {
			name = n
		}
	}
	g.Expect(name).To(HavePrefix("capwin-"+f.ns+"-win-fd-rack-a-"), "the VM is in its domain's VM group")
	g.Expect(rules).To(HaveKey(name))
	g.Expect(rules[name].AffineHostGroupName).To(Equal(hostGroup))
	g.Expect(*rules[name].Mandatory).To(BeTrue())

	g.Expect(k8s.Delete(ctx, f.vm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	groups, rules = drsGroups(g, c)
	g.Expect(groups).NotTo(HaveKey(name), "the domain's last VM took its group along")
	g.Expect(rules).NotTo(HaveKey(name))

	missing := newNamespace(t, watchFilter, nil)
	missing.addIdentitySecret(t, missing.ns, "vcenter-identity", vcsim.URL.User.Username())
	missing.addCluster(t, "win", domain("capwin-test-no-such-group"))
	missing.failureDomain = "rack-a"
	missing.addMachine(t, "win-md-0-fd-"+randSuffix(), userData, defaultSpec())
	bad := missing.waitReason(t, infrav1.InvalidSpecReason)
	g.Expect(condition(bad.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(ContainSubstring(`has no DRS host group "capwin-test-no-such-group"`))
	badVMs := vmsWithUUID(g, c, string(bad.UID))
	g.Expect(badVMs).To(HaveLen(1))
	g.Expect(badVMs[0].Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOff))
}
