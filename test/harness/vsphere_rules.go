package harness

import (
	"context"
	"strings"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// countVSphere counts what capwin leaves in vcsim besides VMs: anti-affinity rules (countRules)
// and tag attachments (countTagged), in one session.
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

// countRules counts the DRS VM-VM anti-affinity rules capwin created in vcsim's clusters
// (spec.antiAffinity; capwin names them "capwin-…"): one read through a container view.
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
		cfg, ok := cc.ConfigurationEx.(*types.ClusterConfigInfoEx)
		if !ok {
			continue
		}
		for _, r := range cfg.Rule {
			if _, aa := r.(*types.ClusterAntiAffinityRuleSpec); aa && strings.HasPrefix(r.GetClusterRuleInfo().Name, "capwin-") {
				n++
			}
		}
	}
	return n, nil
}
