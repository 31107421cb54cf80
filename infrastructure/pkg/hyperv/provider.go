// Package hyperv drives Windows Server Hyper-V hosts over WinRM: the backend of HyperVMachines
// (placement, create, power, delete, guest watch) and the connection to each host. Every host
// operation is one of the static PowerShell files of package wire, which takes one JSON document
// and returns one, so no value is ever spliced into script text.
package hyperv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/infrastructure/pkg/holders"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// DefaultGuestWatch is the manager's interval of the Hyper-V guest watch (Conns.GuestWatch).
const DefaultGuestWatch = 3 * time.Second

// Default folders on the hosts.
const (
	DefaultVMPath   = infrav1.DefaultHyperVVMPath
	DefaultDiskPath = infrav1.DefaultHyperVDiskPath
)

// Provider builds the Hyper-V backend of one reconcile from the HyperVCluster's hosts.
type Provider struct {
	Client client.Client
	Conns  *Conns
	// IdentityNamespace is the manager's namespace, where HyperVClusterIdentities' Secrets live.
	IdentityNamespace string
	// Secrets reads the login Secrets (credentials.NewCache); nil reads them through Client.
	Secrets client.Reader

	// Placements counts the VMs per host for placing new ones; setup adds it as an event handler
	// of the manager's HyperVMachine informer.
	Placements Placements
	placeMu    sync.Mutex
}

// Conns caches one connection per host, address and credentials.
type Conns struct {
	// Timeout bounds one WinRM request (default 30s).
	Timeout time.Duration
	// Deadlines bound one operation.
	Deadlines Deadlines
	// Gate keeps refused credentials and unreachable hosts from being tried on every reconcile.
	Gate *logingate.Gate
	// GuestWatch is how often one operation per host reads the guest state of all the host's VMs
	// whose machines wait for their guest, and Wake the machines whose VM changed (see
	// guestWatch). Not positive, or no Wake: off, the machines read their own VMs.
	GuestWatch time.Duration
	Wake       func(k8stypes.NamespacedName)

	mu sync.Mutex
	m  map[string]*Conn
	// holders are the hosts of HyperVClusters (namespace/cluster/host) using each connection: a
	// connection no host uses (its cluster is gone, or its Secret changed) is closed.
	holders holders.Holders
}

// Get returns the cached connection of a host configuration; holder (namespace/cluster/host)
// uses it from now on, and a connection it used before that no one uses any more is closed.
func (c *Conns) Get(holder string, cfg HostConfig) (*Conn, error) {
	key := strings.Join([]string{cfg.Name, cfg.Address, fmt.Sprint(cfg.Port), cfg.Username, cfg.Password,
		fmt.Sprint(cfg.Basic, cfg.Insecure), string(cfg.CABundle), fmt.Sprint(cfg.Secret)}, "\x00")
	if old := c.holders.Hold(holder, key); old != "" {
		c.close(old)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn, ok := c.m[key]; ok {
		return conn, nil
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	conn, err := Dial(cfg, timeout)
	if err != nil {
		return nil, err
	}
	conn.gate, conn.deadlines = c.Gate, c.Deadlines
	if c.GuestWatch > 0 && c.Wake != nil {
		conn.watch = newGuestWatch(conn, c.GuestWatch, c.Wake)
	}
	if c.m == nil {
		c.m = map[string]*Conn{}
	}
	c.m[key] = conn
	return conn, nil
}

// Release closes the connections only the hosts of a deleted HyperVCluster used.
func (c *Conns) Release(cluster string) {
	for _, k := range c.holders.Release(cluster) {
		c.close(k)
	}
}

// Len is the number of cached connections.
func (c *Conns) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *Conns) close(key string) {
	c.mu.Lock()
	conn := c.m[key]
	delete(c.m, key)
	c.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// Release closes the host connections of a deleted HyperVCluster unless another cluster uses them.
func (p *Provider) Release(cluster client.ObjectKey) {
	p.Conns.Release(cluster.Namespace + "/" + cluster.Name)
}

// holder names one host of a HyperVCluster for the connection cache.
func holder(hc *infrav1.HyperVCluster, host string) string {
	return hc.Namespace + "/" + hc.Name + "/" + host
}

// HostConfigs reads the credentials of every host of a HyperVCluster, by host name.
func (p *Provider) HostConfigs(ctx context.Context, hc *infrav1.HyperVCluster) (map[string]HostConfig, error) {
	out := map[string]HostConfig{}
	for _, h := range hc.Spec.Hosts {
		cfg, err := p.HostConfig(ctx, hc, h)
		if err != nil {
			return nil, err
		}
		out[h.Name] = cfg
	}
	return out, nil
}

// HostConfig reads the login of one host of a HyperVCluster (the host's own Secret, else the
// cluster's Secret or HyperVClusterIdentity), once the cluster may use it.
func (p *Provider) HostConfig(ctx context.Context, hc *infrav1.HyperVCluster, h infrav1.HyperVHost) (HostConfig, error) {
	ref := hc.Spec.HostCredentials(h)
	caBundle := h.CABundle
	var allowed *infrav1.HyperVAllowed
	var identity string
	// A lent login goes to the identity's hosts, reached the identity's way only.
	lent := func(obj client.Object) error {
		id := obj.(*infrav1.HyperVClusterIdentity)
		entry, err := lend.HyperVHost(id, h, hostField(hc, h))
		if err != nil {
			return hypervisor.Errorf(infrav1.EndpointNotLentReason, "%v", err)
		}
		caBundle, allowed, identity = entry.CABundle, &id.Spec.Allowed, id.Name
		return nil
	}
	secret, err := credentials.Reader{Client: p.Client, Secrets: p.Secrets, Namespace: p.IdentityNamespace}.Secret(ctx, hc, credentials.Ref{Kind: ref.Kind, Name: ref.Name}, lent)
	if e := (*hypervisor.Error)(nil); errors.As(err, &e) {
		return HostConfig{}, err // the cluster may not use it (CredentialsInUse, NamespaceNotAllowed)
	}
	if err != nil {
		return HostConfig{}, &HostError{Kind: wire.KindCredentials, Host: h.Name, Message: err.Error()}
	}
	user, pw := string(secret.Data["username"]), string(secret.Data["password"])
	if user == "" || pw == "" {
		return HostConfig{}, &HostError{Kind: wire.KindCredentials, Host: h.Name, Message: fmt.Sprintf("credentials Secret %s/%s needs the keys username and password", secret.Namespace, secret.Name)}
	}
	return HostConfig{Name: h.Name, Address: h.Address, Port: int(h.Port), Username: user, Password: pw,
		Basic: h.AuthType == infrav1.WinRMAuthBasic, CABundle: caBundle, Insecure: h.InsecureSkipTLSVerify,
		Secret: logingate.Key{Namespace: secret.Namespace, Name: secret.Name, ResourceVersion: secret.ResourceVersion},
		Lent:   allowed, Identity: identity}, nil
}

// Folders returns the cluster's VM and disk folders: on a failover cluster, vms and disks below
// its storage path on a Cluster Shared Volume.
func Folders(hc *infrav1.HyperVCluster) wire.Placement {
	if fc := hc.Spec.FailoverCluster; fc != nil {
		root := strings.TrimRight(fc.StoragePath, `\/`)
		return wire.Placement{VMPath: root + `\vms`, DiskPath: root + `\disks`, Cluster: fc.Name}
	}
	p := wire.Placement{VMPath: hc.Spec.VMPath, DiskPath: hc.Spec.DiskPath}
	if p.VMPath == "" {
		p.VMPath = DefaultVMPath
	}
	if p.DiskPath == "" {
		p.DiskPath = DefaultDiskPath
	}
	return p
}

// Backend implements hypervisor.BackendFor.
func (p *Provider) Backend(ctx context.Context, s *hypervisor.Scope) (hypervisor.Backend, error) {
	hc, ok := s.InfraCluster.(*infrav1.HyperVCluster)
	if !ok {
		return nil, fmt.Errorf("cluster infrastructure is %T, not a HyperVCluster", s.InfraCluster)
	}
	m, ok := s.InfraMachine.(*infrav1.HyperVMachine)
	if !ok {
		return nil, fmt.Errorf("machine is %T, not a HyperVMachine", s.InfraMachine)
	}
	hosts, err := p.HostConfigs(ctx, hc)
	if err != nil {
		return nil, err
	}
	return &backend{p: p, cluster: hc, m: m, hosts: hosts, folders: Folders(hc)}, nil
}

// conn returns the connection of one of the cluster's hosts.
func (b *backend) conn(host string) (*Conn, error) {
	cfg, ok := b.hosts[host]
	if !ok {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "host %q is not one of the HyperVCluster's hosts", host)
	}
	return b.p.Conns.Get(holder(b.cluster, host), cfg)
}

// hostField is the path of a host in its HyperVCluster, e.g. spec.hosts[1].
func hostField(hc *infrav1.HyperVCluster, h infrav1.HyperVHost) string {
	for i := range hc.Spec.Hosts {
		if hc.Spec.Hosts[i].Name == h.Name {
			return fmt.Sprintf("spec.hosts[%d]", i)
		}
	}
	return "spec.hosts"
}
