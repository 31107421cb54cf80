package harness

import (
	"context"
	"strings"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// The vSphere cluster offers one failure domain, FailureDomain, whose hostGroup is HostGroup: a
// DRS host group of every host of vcsim's cluster that the harness creates as an administrator
// would. Workers placed in it (Workers.FailureDomain) make capwin keep a VM group and a VM-Host
// rule, which countRules then counts.
const (
	FailureDomain = "rack-a"
	HostGroup     = "rack-a-hosts"
)

// countVSphere counts what capwin leaves in vcsim besides VMs: DRS rules and VM groups
// (countRules) and tag attachments (countTagged), in one session.
func (v *VSphere) countVSphere(ctx context.Context) (rules, tagged int, err error) {
	c, err := newVimClient(ctx, v.Server.URL)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = c.logout(ctx) }()
	if rules, err = countRules(ctx, c); err != nil {
		return 0, 0, err
	}
	tagged, err = countTagged(ctx, c, v.Server.URL.User)
	return rules, tagged, err
}

// countRules counts the DRS rules and VM groups capwin created in vcsim's clusters (anti-affinity
// rules of spec.antiAffinity, the VM groups and VM-Host rules of failure domains with a hostGroup;
// capwin names them all "capwin-…"): one read through a container view.
func countRules(ctx context.Context, c *vimClient) (int, error) {
	cv, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"ClusterComputeResource"}, true)
	if err != nil {
		return 0, err
	}
	defer func() { _ = cv.Destroy(ctx) }()
	var clusters []mo.ClusterComputeResource
	if err := cv.Retrieve(ctx, []string{"ClusterComputeResource"}, []string{"configurationEx"}, &clusters); err != nil {
		return 0, err
	}
	n := 0
	for _, cc := range clusters {
		if cfg, ok := cc.ConfigurationEx.(*types.ClusterConfigInfoEx); ok {
			n += capwinRules(cfg)
		}
	}
	return n, nil
}

// capwinRules counts a cluster's anti-affinity rules, VM-Host rules and VM groups named by capwin.
// The administrator's host groups are not counted.
func capwinRules(cfg *types.ClusterConfigInfoEx) int {
	n := 0
	for _, r := range cfg.Rule {
		switch r.(type) {
		case *types.ClusterAntiAffinityRuleSpec, *types.ClusterVmHostRuleInfo:
			if strings.HasPrefix(r.GetClusterRuleInfo().Name, "capwin-") {
				n++
			}
		}
	}
	for _, g := range cfg.Group {
		if _, vms := g.(*types.ClusterVmGroup); vms && strings.HasPrefix(g.GetClusterGroupInfo().Name, "capwin-") {
			n++
		}
	}
	return n
}

// createHostGroup creates HostGroup in the cluster of the harness's resource pool, with all its
// hosts.
func (v *VSphere) createHostGroup(ctx context.Context, c *vimClient) error {
	cc, err := find.NewFinder(c.Client).ClusterComputeResource(ctx, strings.TrimSuffix(v.ResourcePool, "/Resources"))
	if err != nil {
		return err
	}
	hosts, err := cc.Hosts(ctx)
	if err != nil {
		return err
	}
	group := &types.ClusterHostGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: HostGroup}}
	for _, h := range hosts {
		group.Host = append(group.Host, h.Reference())
	}
	task, err := cc.Reconfigure(ctx, &types.ClusterConfigSpecEx{GroupSpec: []types.ClusterGroupSpec{{
		ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd}, Info: group}}}, true)
	if err != nil {
		return err
	}
	return task.Wait(ctx)
}
