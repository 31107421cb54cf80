package hyperv

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// HostCheck is the outcome of probing one host.
type HostCheck struct {
	Name string
	Info wire.HostInfo
	Err  error
}

// CheckHosts probes every host of a HyperVCluster in parallel (capacity, the virtual switch of the
// host, its failure domain's or the cluster's, the VM and disk folders, which it creates).
func (p *Provider) CheckHosts(ctx context.Context, hc *infrav1.HyperVCluster) []HostCheck {
	out := make([]HostCheck, len(hc.Spec.Hosts))
	var wg sync.WaitGroup
	for i, h := range hc.Spec.Hosts {
		out[i].Name = h.Name
		cfg, err := p.HostConfig(ctx, hc, h)
		if err == nil {
			err = lentCluster(cfg, hc)
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		wg.Add(1)
		go func(i int, cfg HostConfig) {
			defer wg.Done()
			out[i].Info, out[i].Err = p.checkHost(ctx, holder(hc, cfg.Name), cfg, Folders(hc), hc.Spec.SwitchFor(h.Name))
		}(i, cfg)
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (p *Provider) checkHost(ctx context.Context, holder string, cfg HostConfig, folders wire.Placement, vswitch string) (wire.HostInfo, error) {
	c, err := p.Conns.Get(holder, cfg)
	if err != nil {
		return wire.HostInfo{}, err
	}
	var info wire.HostInfo
	if err := c.Run(ctx, wire.OpHost, folders, &info); err != nil {
		return info, err
	}
	if folders.Cluster != "" && !strings.EqualFold(info.Cluster, folders.Cluster) {
		return info, &HostError{Kind: wire.KindInvalidSpec, Host: cfg.Name, Op: wire.OpHost.Name, Action: "check the failover cluster",
			Message: fmt.Sprintf("host is not a node of failover cluster %q (its cluster: %q)", folders.Cluster, info.Cluster)}
	}
	if !slices.Contains(info.Switches, vswitch) {
		return info, &HostError{Kind: wire.KindInvalidSpec, Host: cfg.Name, Op: wire.OpHost.Name, Action: fmt.Sprintf("check virtual switch %q", vswitch),
			Message: fmt.Sprintf("virtual switch %q does not exist (switches: %v)", vswitch, info.Switches)}
	}
	return info, nil
}
