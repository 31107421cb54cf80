// Package guest simulates a Windows guest for the end-to-end harness. A guest learns everything
// from the user data its hypervisor delivered, as cloudbase-init and bootstrap.ps1 do: it runs the
// script's steps with the same status reports and file effects, then performs kubeadm join's
// bootstrap-token discovery and the kubelet's TLS bootstrap for real against the workload
// cluster, registers its Node with the kubelet's own client certificate, renews its Lease and
// plays the kubelet for the Pods bound to it. Nothing here bypasses the controllers: a wrong CA
// pin, an expired token or missing RBAC fail the join as they would on Windows.
package guest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/guestnet"
	"github.com/capwin/capwin/test/framework/nodenet"
)

// Channel is how a guest talks to its hypervisor (VMware Tools guestinfo on vSphere, KVP on Hyper-V).
type Channel interface {
	// Address reports the guest's IPv4 address once its network is up.
	Address(ctx context.Context, ip string) error
	// Status sends one bootstrap status report (the exact JSON bootstrap.ps1's Send-Status
	// writes); s is the data document's status section, from which the channel takes its key.
	Status(ctx context.Context, s userdata.Status, report []byte) error
}

// Faults make a guest misbehave the way broken images and nodes do.
type Faults struct {
	NeverJoin bool   // boots and reports its address but the bootstrap never runs (broken image)
	FailAt    string // name of a bootstrap step that fails (e.g. "containerd", "join"); reported as state Failed
	// RestartDuring names a step in whose middle the guest loses power once (downloads: after
	// stopping a service, before its files are replaced); the script runs again after the restart.
	RestartDuring string
	// UnpullableImages are image references (as the prePull step names them) whose pulls fail.
	UnpullableImages []string
}

// Config describes one guest.
type Config struct {
	UserData          []byte // as cloudbase-init receives it (transport encoding removed; may still be gzip)
	Build             uint16 // Windows build of the image: osversion.LTSC2022 (default) or osversion.LTSC2025
	Address           string // IPv4 of its first NIC
	Channel           Channel
	Faults            Faults
	HeartbeatInterval time.Duration // Lease renewal (default 10s)
	JoinTimeout       time.Duration // how long discovery/TLS bootstrap retry before the join step fails (default 2m)
	// NodeHealthInterval runs capwin's node health checker on the joined node at this interval
	// (0: not at all).
	NodeHealthInterval time.Duration
	Log                logr.Logger

	// Hostname is the computer name (from the hypervisor's metadata); it is the node name when
	// the user data names none. Default: "win-" + Address with dashes.
	Hostname string
	// Domain is the Active Directory domain the guest's network reaches (nil: none).
	Domain *DomainController
	// Disks are the data disks the hypervisor attached.
	Disks []Disk
	// Network is capwin's network document as the hypervisor delivered it beside the metadata
	// (guestinfo.capwin.network decoded, or capwin-network.json of the config drive); nil: none.
	Network []byte
	// MACs are the VM's adapters (any separators); nil: every adapter a document names is there.
	MACs []string
	// Nodes is the workload cluster's node network, on which the kubelet opens its port at Address
	// (nil: the kubelet serves nothing).
	Nodes *nodenet.Network
	// KubeletService is the command line of a kubelet service the image registered ("": none);
	// image-builder's runs the kubelet under kube-log-runner.
	KubeletService string
	// NoKubeLogRunner: the image has no kube-log-runner in its binaries folder (and none is
	// downloaded), so the kubelet keeps no log file.
	NoKubeLogRunner bool
	// CPUs and MemoryMiB are the VM's size as the kubelet reports it (default 2 and 4096).
	CPUs, MemoryMiB int
	// Image is what the image has, for the image check (the zero value: what a node needs).
	Image Image
	// StepTime is how long each bootstrap step takes at least, so that a bootstrap lasts as long
	// as on Windows (minutes: 14s for each of the 18 steps is about 4 min); 0: no longer than its work.
	StepTime time.Duration
}

// Guest is a running simulated Windows guest.
type Guest struct {
	cfg     Config
	journal *Journal
	fs      *fileSystem // the journal's disk
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	done    chan struct{}
	once    sync.Once

	mu sync.Mutex
	// containerdPath is where the bootstrap wrote containerd's config (read by the kubelet).
	containerdPath string
	err            error
	nodeName       string
	timezone       string // the Windows time zone id, "" while unset
	reports        []Report
	sandboxPull    ImagePull
	pulled         []ImagePull      // the prePull step's images
	disks          []Disk           // the data disks' state (the disks step changes it)
	network        guestnet.Network // what the network step configured
	closers        []func()         // close the kubelet's connections on Stop
	kubeletLog     *nodeLog         // the kubelet's output as its service keeps it (nil: kept nowhere)
	containerdLog  *nodeLog         // containerd's --log-file, rotated by capwin's scheduled task
	tasks          []string         // the scheduled tasks the bootstrap registered
	serving        bool             // the kubelet's port is open on the node network
	hnsLost        bool             // the pod network's HNS network is gone (LoseHNSNetwork)
}

func (g *Guest) containerdConfig() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.containerdPath
}

// Boot powers the guest on. It returns at once; the guest runs until Stop or ctx ends.
func Boot(ctx context.Context, cfg Config) *Guest {
	if cfg.Build == 0 {
		cfg.Build = osversion.LTSC2022
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 10 * time.Second
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 2 * time.Minute
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = 2
	}
	if cfg.MemoryMiB <= 0 {
		cfg.MemoryMiB = 4096
	}
	if cfg.Hostname == "" {
		cfg.Hostname = defaultHostname(cfg.Address)
	}
	j := NewJournal()
	g := &Guest{cfg: cfg, journal: j, fs: j.fs, done: make(chan struct{}), disks: append([]Disk(nil), cfg.Disks...)}
	g.ctx, g.cancel = context.WithCancel(ctx)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := g.run(g.ctx)
		g.mu.Lock()
		g.err = err
		g.mu.Unlock()
		close(g.done)
	}()
	context.AfterFunc(ctx, g.Stop) // ctx ending is a power-off too: close the connections
	return g
}

// ErrNeverJoins is Err of a guest with Faults.NeverJoin.
var ErrNeverJoins = errors.New("the guest never runs its bootstrap (Faults.NeverJoin)")

func (g *Guest) run(ctx context.Context) error {
	log := g.cfg.Log
	if g.cfg.Channel != nil && g.cfg.Address != "" {
		if err := g.cfg.Channel.Address(ctx, g.cfg.Address); err != nil {
			log.Error(err, "report address")
		}
	}
	g.journal.CloudbaseInit(g.cfg.Faults.NeverJoin)
	if g.cfg.Faults.NeverJoin {
		return ErrNeverJoins
	}
	err := g.bootstrap(ctx)
	if err != nil {
		log.Info("bootstrap failed", "err", err.Error())
	} else {
		log.V(1).Info("bootstrap succeeded", "node", g.NodeName())
	}
	return err
}

// takeTime waits for Config.StepTime, or until the guest stops.
func (g *Guest) takeTime(ctx context.Context) error {
	if g.cfg.StepTime <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(g.cfg.StepTime):
		return nil
	}
}

// Stop powers the guest off: the bootstrap, heartbeats and pod handling end. It waits for all
// of the guest's goroutines and is idempotent; nothing is sent to the apiserver afterwards.
func (g *Guest) Stop() {
	g.once.Do(func() {
		g.cancel()
		g.wg.Wait()
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, closeConns := range g.closers {
			closeConns()
		}
	})
}

// Done is closed once the bootstrap has finished: joined, failed, or never run.
func (g *Guest) Done() <-chan struct{} { return g.done }

// Err is nil after a successful join and the reason otherwise (valid once Done is closed).
func (g *Guest) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// NodeName is the guest's Kubernetes node name, as its user data says ("" before the guest has
// read it, or if it never does).
func (g *Guest) NodeName() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nodeName
}

// File returns a file of the simulated file system (paths are case-insensitive, / or \).
func (g *Guest) File(path string) ([]byte, bool) { return g.fs.read(path) }

// Reports returns the status reports the guest has sent, oldest first.
func (g *Guest) Reports() []Report {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Report(nil), g.reports...)
}

// spawn runs f in a goroutine that Stop waits for.
func (g *Guest) spawn(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}
