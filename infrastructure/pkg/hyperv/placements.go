package hyperv

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// chosenFor is how long a host this manager chose is counted before the machine's status shows it.
const chosenFor = time.Minute

// Placements counts the VMs on each host per MachineDeployment and per cluster, kept up to date
// by the HyperVMachine informer's events (it is a ResourceEventHandler), so that placing a VM
// costs the same with ten machines as with thousands (listing the cluster's machines for every
// placement made a create's CPU grow with the machines). It adds the hosts this manager chose
// that no status shows yet.
type Placements struct {
	mu     sync.Mutex
	seen   map[types.UID]spot       // status.vm.host of each machine that has one
	counts map[group]map[string]int // group -> host -> VMs
	chosen map[types.UID]choice     // chosen by this manager, not yet in a status
	synced func() bool              // the event handler has seen the informer's initial list
}

// group is one MachineDeployment of a cluster or, with deployment "", all the cluster's machines.
type group struct{ namespace, cluster, deployment string }

type spot struct {
	group
	host string
}

type choice struct {
	spot
	at time.Time
}

// groupOf is the group whose spread a machine's placement follows: its MachineDeployment's, or the
// cluster's when it has none.
func groupOf(namespace string, labels map[string]string) group {
	return group{namespace: namespace, cluster: labels[clusterv1.ClusterNameLabel], deployment: labels[clusterv1.MachineDeploymentNameLabel]}
}

// Synced reports whether the counts include every machine the informer had when the handler was added.
func (p *Placements) Synced() bool { return p.synced == nil || p.synced() }

// WaitFor makes Synced follow the event handler's registration.
func (p *Placements) WaitFor(r toolscache.ResourceEventHandlerRegistration) { p.synced = r.HasSynced }

// OnAdd counts a machine's host.
func (p *Placements) OnAdd(obj any, _ bool) { p.observe(obj) }

// OnUpdate moves a machine's count when its host changes.
func (p *Placements) OnUpdate(_, obj any) { p.observe(obj) }

// OnDelete drops a machine's count.
func (p *Placements) OnDelete(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(*infrav1.HyperVMachine); ok {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.drop(m.UID)
		delete(p.chosen, m.UID)
	}
}

func (p *Placements) observe(obj any) {
	m, ok := obj.(*infrav1.HyperVMachine)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(m.UID)
	if m.Status.VM.Host == "" {
		return
	}
	if p.seen == nil {
		p.seen, p.counts = map[types.UID]spot{}, map[group]map[string]int{}
	}
	at := spot{groupOf(m.Namespace, m.Labels), m.Status.VM.Host}
	p.seen[m.UID] = at
	for _, g := range at.groups() {
		if p.counts[g] == nil {
			p.counts[g] = map[string]int{}
		}
		p.counts[g][at.host]++
	}
	delete(p.chosen, m.UID)
}

// drop removes a machine's counted host; the caller holds mu.
func (p *Placements) drop(uid types.UID) {
	at, ok := p.seen[uid]
	if !ok {
		return
	}
	delete(p.seen, uid)
	for _, g := range at.groups() {
		if p.counts[g][at.host]--; p.counts[g][at.host] <= 0 {
			delete(p.counts[g], at.host)
		}
	}
}

// groups are the counts a machine is in: its cluster's and, with one, its MachineDeployment's.
func (s spot) groups() []group {
	all := group{namespace: s.namespace, cluster: s.cluster}
	if s.deployment == "" {
		return []group{all}
	}
	return []group{all, s.group}
}

func (s spot) in(g group) bool {
	for _, x := range s.groups() {
		if x == g {
			return true
		}
	}
	return false
}

// Choose records the host chosen for a machine until its status shows it.
func (p *Placements) Choose(uid types.UID, g group, host string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chosen == nil {
		p.chosen = map[types.UID]choice{}
	}
	p.chosen[uid] = choice{spot{g, host}, now}
}

// Unchoose forgets the host chosen for a machine (its choice was not recorded in its status).
func (p *Placements) Unchoose(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.chosen, uid)
}

// Spread is the VMs per host of group g, not counting machine self.
func (p *Placements) Spread(g group, self types.UID, now time.Time) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for h, n := range p.counts[g] {
		out[h] = n
	}
	if at, ok := p.seen[self]; ok && at.in(g) {
		out[at.host]--
	}
	for uid, c := range p.chosen {
		switch {
		case now.Sub(c.at) > chosenFor:
			delete(p.chosen, uid)
		case uid != self && c.in(g):
			out[c.host]++
		}
	}
	return out
}
