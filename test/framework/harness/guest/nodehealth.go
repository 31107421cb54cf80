package guest

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/capwin/capwin/nodehealth/health"
)

// The pod network's HNS network on a simulated node (Calico's VXLAN network).
const (
	hnsNetwork     = "Calico"
	hnsNetworkType = "Overlay"
)

// healthProbes are the node health checker's probes on the simulated node: HNS has the default
// nat network and, once the node joined, the pod network's (until LoseHNSNetwork), containerd
// answers, the kubelet's health follows its serving port, and C: is 40% full.
type healthProbes struct{ g *Guest }

func (p healthProbes) Networks(context.Context) ([]health.Network, error) {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	nets := []health.Network{{Name: "nat", Type: "NAT"}}
	if p.g.nodeName != "" && !p.g.hnsLost {
		nets = append(nets, health.Network{Name: hnsNetwork, Type: hnsNetworkType})
	}
	return nets, nil
}

func (p healthProbes) Runtime(context.Context) error { return nil }

func (p healthProbes) Kubelet(context.Context) error {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	if !p.g.serving {
		return errors.New("dial tcp 127.0.0.1:10248: connection refused")
	}
	return nil
}

func (p healthProbes) Disk(context.Context) (uint64, uint64, error) { return 60 << 30, 100 << 30, nil }

// LoseHNSNetwork is the fault HNS leaves behind on real nodes: the pod network's HNS network is
// gone while the kubelet stays Ready, so new pods get no network.
func (g *Guest) LoseHNSNetwork() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hnsLost = true
}

// runHealthChecker runs capwin's node health checker (nodehealth/health) for the node, as the
// node-health addon's DaemonSet does, with the node's client, every Config.NodeHealthInterval.
func (g *Guest) runHealthChecker(node string, cs kubernetes.Interface) {
	every := g.cfg.NodeHealthInterval
	if every <= 0 {
		return
	}
	c := health.New(health.Config{Node: node, Network: hnsNetwork, NetworkType: hnsNetworkType, Timeout: 5 * time.Second}, healthProbes{g}, cs)
	g.spawn(func() {
		c.Run(g.ctx, every, func(err error) { g.cfg.Log.V(1).Info("node health checker", "err", err.Error()) })
	})
}
