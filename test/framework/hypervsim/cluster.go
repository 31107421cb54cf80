package hypervsim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// Cluster is a simulated Windows Server failover cluster whose nodes are simulated hosts. It holds
// the cluster groups (roles) of its highly available VMs, each with its owner node and its
// AntiAffinityClassNames, and the Cluster Shared Volumes that every node sees under
// C:\ClusterStorage. Its nodes share one lock, as they share the volumes and the groups.
// It answers what capwin's scripts ask of the FailoverClusters module: Get-Cluster (name,
// ClusterEnforceAntiAffinity), Get-ClusterGroup, Add-ClusterVirtualMachineRole, Remove-ClusterGroup
// and the AntiAffinityClassNames property; Move and Fail play Move-ClusterVirtualMachineRole and a
// node failure.
type Cluster struct {
	Name string

	mu     *sync.Mutex
	nodes  []*Host
	groups map[string]*Group // by name, lower case
	csv    *volume
	// enforce is the cluster's ClusterEnforceAntiAffinity.
	enforce bool
}

// Group is one cluster group: a VM role, named as Add-ClusterVirtualMachineRole -Name gave it.
type Group struct {
	Name, VMID, Owner      string
	AntiAffinityClassNames []string
	// Offline: the cluster found no node for it after a failure (enforced anti-affinity).
	Offline bool
}

// NewCluster makes the hosts the nodes of a failover cluster; their files under C:\ClusterStorage
// move to its shared volumes. Call it before the hosts serve.
func NewCluster(name string, nodes ...*Host) *Cluster {
	c := &Cluster{Name: name, mu: &sync.Mutex{}, nodes: nodes, groups: map[string]*Group{}, csv: newVolume()}
	for _, h := range nodes {
		h.mu, h.cluster, h.csv = c.mu, c, c.csv
		// Files a node had under C:\ClusterStorage (its golden disks) are on the shared volume now.
		for p, size := range h.local.files {
			if strings.HasPrefix(p, csvRoot) {
				c.csv.files[p] = size
				if d, ok := h.local.vhds[p]; ok {
					c.csv.vhds[p] = d
				}
				h.local.delete(p)
			}
		}
	}
	return c
}

// EnforceAntiAffinity sets the cluster's ClusterEnforceAntiAffinity.
func (c *Cluster) EnforceAntiAffinity(on bool) { c.mu.Lock(); c.enforce = on; c.mu.Unlock() }

// Groups returns copies of the cluster's groups, by name.
func (c *Cluster) Groups() []Group {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Group
	for _, g := range c.groups {
		cp := *g
		cp.AntiAffinityClassNames = slices.Clone(g.AntiAffinityClassNames)
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Files lists the paths of the files on the cluster's shared volumes.
func (c *Cluster) Files() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for p := range c.csv.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Move plays Move-ClusterVirtualMachineRole -Name group -Node node: a live migration of the
// group's VM to another node, which keeps its state.
func (c *Cluster) Move(group, node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[strings.ToLower(group)]
	if !ok {
		return fmt.Errorf("cluster %s has no group %s", c.Name, group)
	}
	to := c.node(node)
	if to == nil || to.down {
		return fmt.Errorf("cluster %s has no node %s that is up", c.Name, node)
	}
	c.moveVM(g, to)
	return nil
}

// Fail plays a node failure: the node runs nothing from now on (until Recover), and the cluster
// restarts each of its roles on the node up with the fewest roles of the same anti-affinity class,
// then the fewest roles; with enforced anti-affinity, a role that only fits beside one of its
// class stays offline. It returns the groups' new owners.
func (c *Cluster) Fail(node string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	from := c.node(node)
	from.down = true
	moved := map[string]string{}
	for _, g := range c.groups {
		if !strings.EqualFold(g.Owner, from.Name) {
			continue
		}
		if to := c.failoverTarget(g); to != nil {
			c.moveVM(g, to)
			restart(to.vms[g.VMID])
			moved[g.Name] = to.Name
		} else {
			g.Offline = true
		}
	}
	return moved
}

// Recover brings a failed node back (empty: its roles moved away).
func (c *Cluster) Recover(node string) { c.mu.Lock(); c.node(node).down = false; c.mu.Unlock() }

func (c *Cluster) failoverTarget(g *Group) *Host {
	var best *Host
	bestClass, bestAll := 0, 0
	for _, h := range c.nodes {
		if h.down {
			continue
		}
		class, all := 0, 0
		for _, other := range c.groups {
			if other != g && strings.EqualFold(other.Owner, h.Name) {
				all++
				if sharesClass(g, other) {
					class++
				}
			}
		}
		if c.enforce && class > 0 {
			continue
		}
		if best == nil || class < bestClass || (class == bestClass && all < bestAll) {
			best, bestClass, bestAll = h, class, all
		}
	}
	return best
}

// restart is a failover's effect on a VM: the cluster brings an online role (running, or on its
// way there) online on its new node, a cold boot; an offline one stays off.
func restart(vm *VM) {
	if vm == nil {
		return
	}
	if vm.State == "Running" || vm.State == "Starting" {
		vm.State = "Running"
		vm.StartNotes = append(vm.StartNotes, vm.Notes)
		return
	}
	vm.State, vm.Heartbeat = "Off", false
}

func sharesClass(a, b *Group) bool {
	for _, n := range a.AntiAffinityClassNames {
		if slices.Contains(b.AntiAffinityClassNames, n) {
			return true
		}
	}
	return false
}

// moveVM hands a group's VM to another node (callers hold the lock).
func (c *Cluster) moveVM(g *Group, to *Host) {
	if from := c.node(g.Owner); from != nil && from != to {
		if vm, ok := from.vms[g.VMID]; ok {
			delete(from.vms, g.VMID)
			to.vms[vm.ID] = vm
		}
	}
	g.Owner, g.Offline = to.Name, false
}

func (c *Cluster) node(name string) *Host {
	for _, h := range c.nodes {
		if strings.EqualFold(h.Name, name) {
			return h
		}
	}
	return nil
}

// assertCluster mirrors Assert-CapwinCluster: the host must be a node of the named cluster.
func (h *Host) assertCluster(name string) error {
	if h.cluster == nil || !strings.EqualFold(h.cluster.Name, name) {
		have := ""
		if h.cluster != nil {
			have = h.cluster.Name
		}
		return fail(wire.KindInvalidSpec, "host %s is not a node of failover cluster %s (its cluster: %s)", h.Name, name, have)
	}
	return nil
}

// locate mirrors locate.ps1: Get-ClusterGroup's owner node and state.
func (h *Host) locate(k wire.VMKey) (any, error) {
	if err := h.assertCluster(k.Cluster); err != nil {
		return nil, err
	}
	g, ok := h.cluster.groups[strings.ToLower(k.UID)]
	if !ok {
		return wire.Located{}, nil
	}
	state := "Offline"
	if owner := h.cluster.node(g.Owner); !g.Offline && owner != nil {
		if vm, ok := owner.vms[g.VMID]; ok && vm.State == "Running" {
			state = "Online"
		}
	}
	if g.Offline {
		state = "Failed"
	}
	return wire.Located{Found: true, Node: g.Owner, State: state}, nil
}

// registerRole mirrors create.ps1's Register-CapwinClusterRole: a role an earlier run registered
// is kept; the class name is set when the role lacks it.
func (h *Host) registerRole(vm *VM, in wire.CreateInput) error {
	if err := h.assertCluster(in.Cluster); err != nil {
		return err
	}
	c := h.cluster
	if in.EnforceAntiAffinity && !c.enforce {
		return fail(wire.KindInvalidSpec, "antiAffinity mode Hard needs failover cluster %s to enforce anti-affinity: (Get-Cluster).ClusterEnforceAntiAffinity = 1", in.Cluster)
	}
	g, ok := c.groups[strings.ToLower(in.UID)]
	if !ok {
		g = &Group{Name: in.UID, VMID: vm.ID, Owner: h.Name}
		c.groups[strings.ToLower(in.UID)] = g
	}
	if in.AntiAffinityClass != "" && !slices.Contains(g.AntiAffinityClassNames, in.AntiAffinityClass) {
		g.AntiAffinityClassNames = []string{in.AntiAffinityClass}
	}
	return nil
}

// removeRole mirrors remove.ps1's Remove-CapwinClusterRole.
func (h *Host) removeRole(k wire.VMKey) error {
	if err := h.assertCluster(k.Cluster); err != nil {
		return err
	}
	delete(h.cluster.groups, strings.ToLower(k.UID))
	return nil
}
