package hyperv

import (
	"context"
	"fmt"
	"sort"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// On a failover cluster (spec.failoverCluster) every VM is a role of the cluster, named after the
// machine's UID, and the cluster may move it to another node (a node failure, a live migration,
// an administrator draining a node). capwin then finds it through the cluster: the node recorded
// in status.vm.host first, and when the VM is not there or the node does not answer, any node
// tells which node owns the role now; status.vm.host follows it. The providerID names the failover
// cluster instead of the node (hyperv://<cluster>/<VM id>): a Node's providerID never changes,
// and the VM id stays the same when the VM moves.

// maxClassName bounds an anti-affinity class name (a cluster group property; kept short to read).
const maxClassName = 80

// providerHost is the host part of a VM's providerID: the failover cluster's name (lower case) on
// a failover cluster, else the host.
func (b *backend) providerHost(host string) string {
	if b.folders.Cluster != "" {
		return strings.ToLower(b.folders.Cluster)
	}
	return host
}

// findClustered finds the VM of a clustered machine on its recorded node, else on the node that
// owns its role now. A recorded host that is not a node (the cluster's name from a providerID
// after clusterctl move) goes straight to the cluster.
func (b *backend) findClustered(ctx context.Context, s *hypervisor.Scope, host, id string) (*hypervisor.VM, error) {
	var firstErr error
	if _, node := b.hosts[host]; node {
		vm, err := b.findOn(ctx, s, host, id)
		if vm != nil || hypervisor.IsNotOwned(err) || (err == nil && b.resume != "") {
			return vm, err
		}
		firstErr = err
	}
	owner, err := b.locate(ctx, s, host)
	switch {
	case err != nil:
		return nil, err
	case owner == "":
		return nil, firstErr // no role: the VM is gone, unless the recorded node could not tell
	case owner == host && firstErr == nil:
		return nil, nil
	}
	return b.findOn(ctx, s, owner, id)
}

// locate asks the nodes, the one that failed (skip) last, which node owns the machine's role:
// "" when the cluster has no such role. The first node that answers decides.
func (b *backend) locate(ctx context.Context, s *hypervisor.Scope, skip string) (string, error) {
	names := make([]string, 0, len(b.hosts))
	for name := range b.hosts {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] != skip && (names[j] == skip || names[i] < names[j]) })
	var lastErr error
	for _, name := range names {
		c, err := b.conn(name)
		if err != nil {
			lastErr = err
			continue
		}
		var at wire.Located
		if err := c.Run(ctx, wire.OpLocate, b.key(s, ""), &at); err != nil {
			if KindOf(err) == wire.KindInvalidSpec {
				return "", err // not a node of the cluster: every answer would be wrong
			}
			lastErr = err
			continue
		}
		if !at.Found {
			return "", nil
		}
		return b.nodeHost(at.Node)
	}
	return "", fmt.Errorf("no node of failover cluster %s answered: %w", b.folders.Cluster, lastErr)
}

// nodeHost maps a cluster node's name to the host of spec.hosts: by the host's name, else by the
// first label of its address (case-insensitive).
func (b *backend) nodeHost(node string) (string, error) {
	for name, cfg := range b.hosts {
		label, _, _ := strings.Cut(cfg.Address, ".")
		if strings.EqualFold(name, node) || strings.EqualFold(label, node) {
			return name, nil
		}
	}
	return "", hypervisor.Errorf(infrav1.InvalidSpecReason,
		"the VM's role runs on node %q of failover cluster %s, which is none of the HyperVCluster's spec.hosts (by name or the first label of the address): add the node", node, b.folders.Cluster)
}

// antiAffinityClass is the AntiAffinityClassNames entry of the machine's role, and whether the
// cluster must enforce it: none off a failover cluster, with mode None, or without a group.
func (b *backend) antiAffinityClass(s *hypervisor.Scope) (string, bool) {
	aa := b.m.Spec.AntiAffinity
	if b.folders.Cluster == "" || aa == nil || aa.Mode == "" || aa.Mode == infrav1.AntiAffinityNone {
		return "", false
	}
	class := hypervisor.GroupName(s, maxClassName)
	return class, class != "" && aa.Mode == infrav1.AntiAffinityHard
}
