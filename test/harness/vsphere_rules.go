package harness

import (
	"context"
	"strings"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// countRules counts the DRS VM-VM anti-affinity rules capwin created in vcsim's clusters
// (spec.antiAffinity; capwin names them "capwin-…"): one read through a container view.
func (v *VSphere) countRules(ctx context.Context) (int, error) {
	c, err := newVimClient(ctx, v.Server.URL)
	if err != nil {
		return 0, err
	}
	defer func() { _ = c.logout(ctx) }()
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
