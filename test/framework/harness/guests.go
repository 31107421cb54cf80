package harness

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/nodenet"
)

// Guests are the simulated Windows guests of every powered-on VM, keyed by the VM's identity on
// its hypervisor. A hypervisor watcher boots a guest when it sees a VM power on with user data
// and stops it when the VM powers off or disappears.
type Guests struct {
	ctx context.Context
	log logr.Logger
	// HeartbeatInterval and JoinTimeout are handed to every guest booted from now on.
	heartbeat, joinTimeout time.Duration
	stepTime               time.Duration
	nodeHealth             time.Duration

	// Domain is the Active Directory domain every guest's network reaches.
	Domain *guest.DomainController

	// nodes is the workload cluster's node network: each kubelet serves on it.
	nodes *nodenet.Network

	mu      sync.Mutex
	running map[string]*runningGuest
	// refs are the keys of guests by their VM's hypervisor reference (vSphere's vm-N), for the
	// programs Tools starts.
	refs   map[string]string
	faults func(vmName string) guest.Faults
	nextIP map[string]int
	booted int
}

type runningGuest struct {
	vmName string
	*guest.Guest
}

func newGuests(ctx context.Context, log logr.Logger, heartbeat, joinTimeout time.Duration, nodes *nodenet.Network) *Guests {
	return &Guests{ctx: ctx, log: log, heartbeat: heartbeat, joinTimeout: joinTimeout, Domain: NewDomain(), nodes: nodes,
		running: map[string]*runningGuest{}, nextIP: map[string]int{}, refs: map[string]string{}}
}

// The harness's Active Directory domain: its DNS server, the account allowed to join computers
// and the OU for Kubernetes nodes.
const (
	DomainName     = "corp.example.com"
	DomainDNS      = "10.0.0.53"
	DomainJoinUser = `CORP\svc-k8s-join`
	DomainOU       = "OU=Kubernetes,OU=Servers,DC=corp,DC=example,DC=com"
)

// NewDomain is the harness's domain controller with the join account's password.
func NewDomain() *guest.DomainController {
	return &guest.DomainController{Name: DomainName, Address: DomainDNS, Username: DomainJoinUser, Password: "Domain-j0in!", OUs: []string{DomainOU}}
}

// SetFaults decides the faults of guests booted from now on, by VM name (nil = none).
func (g *Guests) SetFaults(f func(vmName string) guest.Faults) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults = f
}

// SetNodeHealth runs capwin's node health checker, at this interval, on the nodes of guests
// booted from now on (0: none), as the flavors' node-health addon does.
func (g *Guests) SetNodeHealth(interval time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nodeHealth = interval
}

// known reports whether a guest runs for the VM key.
func (g *Guests) known(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.running[key]
	return ok
}

// address returns the next free address of a network prefix ("10.1"), as DHCP would.
func (g *Guests) address(prefix string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nextIP[prefix]
	g.nextIP[prefix] = n + 1
	return fmt.Sprintf("%s.%d.%d", prefix, n/250, n%250+1)
}

// boot starts the guest of a VM that powered on with user data. cfg holds what the hypervisor
// delivered (user data, the metadata's local-hostname, which cloudbase-init names the computer
// after, the network document, the adapters), the image's build, the address and the channel;
// the harness adds the rest.
func (g *Guests) boot(key, vmName string, cfg guest.Config) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.running[key]; ok {
		return
	}
	var faults guest.Faults
	if g.faults != nil {
		faults = g.faults(vmName)
	}
	g.log.V(1).Info("guest boots", "vm", vmName, "build", cfg.Build, "address", cfg.Address, "faults", faults)
	cfg.Faults, cfg.Domain, cfg.HeartbeatInterval, cfg.JoinTimeout, cfg.StepTime = faults, g.Domain, g.heartbeat, g.joinTimeout, g.stepTime
	cfg.NodeHealthInterval = g.nodeHealth
	cfg.Log = g.log.WithValues("vm", vmName)
	cfg.Nodes = g.nodes
	g.running[key] = &runningGuest{vmName: vmName, Guest: guest.Boot(g.ctx, cfg)}
	g.booted++
}

// stopMissing stops the guests of the hypervisor (key prefix) whose VMs are not in alive.
func (g *Guests) stopMissing(prefix string, alive map[string]bool) {
	g.mu.Lock()
	var stop []*runningGuest
	for key, r := range g.running {
		if len(key) >= len(prefix) && key[:len(prefix)] == prefix && !alive[key] {
			stop = append(stop, r)
			delete(g.running, key)
		}
	}
	g.mu.Unlock()
	for _, r := range stop {
		g.log.V(1).Info("guest stops (VM powered off or deleted)", "vm", r.vmName)
		r.Stop()
	}
}

// stopAll stops every guest (the harness stops).
func (g *Guests) stopAll() { g.stopMissing("", nil) }

// byKey returns the running guest of a VM key (nil if none).
func (g *Guests) byKey(key string) *guest.Guest {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.running[key]; ok {
		return r.Guest
	}
	return nil
}

// alias records the VM reference of a guest's key; keyOfRef reads it back.
func (g *Guests) alias(ref, key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refs[ref] = key
}

func (g *Guests) keyOfRef(ref string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refs[ref]
}

// Reports returns the bootstrap reports of the running guests, by VM name.
func (g *Guests) Reports() map[string][]guest.Report {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string][]guest.Report, len(g.running))
	for _, r := range g.running {
		out[r.vmName] = r.Reports()
	}
	return out
}

// Running returns the VM names of the running guests, sorted.
func (g *Guests) Running() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.running))
	for _, r := range g.running {
		names = append(names, r.vmName)
	}
	sort.Strings(names)
	return names
}

// ByNode returns the running guest whose Node has the name (nil if none).
func (g *Guests) ByNode(node string) *guest.Guest {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.running {
		if r.NodeName() == node {
			return r.Guest
		}
	}
	return nil
}

// Booted is how many guests have booted since the harness started.
func (g *Guests) Booted() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.booted
}

// Failed returns, by VM name, the errors of running guests whose bootstrap failed.
func (g *Guests) Failed() map[string]error {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]error{}
	for _, r := range g.running {
		select {
		case <-r.Done():
			if err := r.Err(); err != nil {
				out[r.vmName] = err
			}
		default:
		}
	}
	return out
}

// poll runs f every interval until ctx ends.
func poll(ctx context.Context, interval time.Duration, f func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
