// Package harness is capwin's local end-to-end environment on real parts, used by the scenario
// tests (test/e2e), `make demo` (test/cmd/demo) and the benchmarks:
//
//   - the management cluster (test/framework/harness/management): a real kube-apiserver + etcd, CAPI's
//     own core reconcilers and webhooks, capwin's bootstrap and infrastructure providers from
//     their setup packages, and a test-only control plane object;
//   - the workload cluster (test/framework/harness/workload): a second kube-apiserver + etcd with the real
//     kube-scheduler and kube-controller-manager, set up as `kubeadm init` leaves a cluster;
//   - the hypervisor: govmomi's vcsim with Windows Server 2022 and 2025 templates, or three
//     simulated Hyper-V hosts behind real WinRM;
//   - simulated Windows guests (test/framework/harness/guest): booted when a VM powers on, from exactly the
//     user data the hypervisor delivered.
package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapsetup "github.com/capwin/capwin/bootstrap/setup"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/harness/management"
	"github.com/capwin/capwin/test/framework/harness/workload"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/secretscan"
)

// Providers of the harness.
const (
	VCenter = "vcenter"
	HyperV  = "hyperv"
)

// Options configures Start.
type Options struct {
	// Provider is VCenter (default) or HyperV.
	Provider string
	// LogDir keeps the workload cluster's component logs (default: a temporary directory).
	LogDir string
	// Log receives the harness's own messages (guests booting, watcher errors).
	Log logr.Logger
	// GuestPoll is how often the hypervisor is checked for VMs that powered on (default 250ms).
	GuestPoll time.Duration
	// Heartbeat is the guests' Lease renewal interval (default 10s); JoinTimeout how long a guest
	// retries discovery before its join fails (default 2m).
	Heartbeat, JoinTimeout time.Duration
	// GuestStepTime is how long each bootstrap step of a guest takes at least (guest.Config.StepTime).
	GuestStepTime time.Duration
	// Infrastructure and Bootstrap are the providers' tunables (as their flags set them).
	Infrastructure infrasetup.Options
	Bootstrap      bootstrapsetup.Options
	// InfrastructureElsewhere: see management.Options.
	InfrastructureElsewhere bool
	// HyperVFailoverCluster makes the Hyper-V hosts the nodes of one failover cluster
	// (HyperVFailoverClusterName): the HyperVCluster names it, VMs go to its shared volume as
	// roles, and the machine templates ask for Soft anti-affinity.
	HyperVFailoverCluster bool
}

// Harness is a running environment.
type Harness struct {
	opts           Options
	log            logr.Logger
	Management     *management.Management
	Workload       *workload.Cluster
	WorkloadClient client.Client
	VSphere        *VSphere     // VCenter only
	HyperV         []HyperVHost // HyperV only
	// HyperVCluster is the failover cluster of the Hyper-V hosts (Options.HyperVFailoverCluster).
	HyperVCluster *hypervsim.Cluster
	Guests        *Guests
	// Secrets holds every credential the run used, for ScanSecrets.
	Secrets *secretscan.Scanner

	cancel  context.CancelFunc
	logDir  string
	watched chan struct{}
	// machine holds each MachineDeployment's Workers.Machine, for the templates of later images.
	machine *sync.Map
}

// Start starts every part; Stop (or the end of ctx) stops them.
func Start(ctx context.Context, opts Options) (_ *Harness, retErr error) {
	if opts.Provider == "" {
		opts.Provider = VCenter
	}
	if opts.Provider != VCenter && opts.Provider != HyperV {
		return nil, fmt.Errorf("unknown provider %q (want %s or %s)", opts.Provider, VCenter, HyperV)
	}
	if opts.GuestPoll == 0 {
		opts.GuestPoll = 250 * time.Millisecond
	}
	h := &Harness{opts: opts, log: opts.Log, watched: make(chan struct{}), machine: &sync.Map{}}
	ctx, h.cancel = context.WithCancel(ctx)
	defer func() {
		if retErr != nil {
			_ = h.Stop()
		}
	}()
	if h.logDir = opts.LogDir; h.logDir == "" {
		dir, err := os.MkdirTemp("", "capwin-harness-")
		if err != nil {
			return nil, err
		}
		h.logDir = dir
	}
	workloadStarted := make(chan error, 1)
	go func() {
		var err error
		h.Workload, err = workload.Start(ctx, workload.Options{LogDir: h.logDir})
		workloadStarted <- err
	}()
	var err error
	switch opts.Provider {
	case VCenter:
		h.VSphere, err = startVSphere(ctx)
	case HyperV:
		h.HyperV, h.HyperVCluster, err = startHyperV(3, opts.HyperVFailoverCluster)
	}
	if err == nil {
		h.Management, err = management.Start(ctx, management.Options{Infrastructure: opts.Infrastructure, Bootstrap: opts.Bootstrap,
			InfrastructureElsewhere: opts.InfrastructureElsewhere})
	}
	if werr := <-workloadStarted; werr != nil {
		err = errors.Join(err, fmt.Errorf("workload cluster: %w", werr))
	}
	if err != nil {
		return nil, err
	}
	if h.WorkloadClient, err = client.New(h.Workload.Config, client.Options{}); err != nil {
		return nil, err
	}
	if err := h.watchSecrets(ctx); err != nil {
		return nil, fmt.Errorf("secret scan: %w", err)
	}
	h.Guests = newGuests(ctx, h.log.WithName("guest"), opts.Heartbeat, opts.JoinTimeout, h.Workload.Nodes)
	h.Guests.stepTime = opts.GuestStepTime
	h.answerCollectors()
	return h, h.startWatcher(ctx)
}

func (h *Harness) startWatcher(ctx context.Context) error {
	if h.opts.Provider == HyperV {
		go func() { defer close(h.watched); h.watchHyperV(ctx) }()
		return nil
	}
	c, err := newVimClient(ctx, h.VSphere.Server.URL)
	if err != nil {
		close(h.watched)
		return err
	}
	go func() { defer close(h.watched); h.watchVSphere(ctx, c) }()
	return nil
}

// Provider is the harness's infrastructure provider (VCenter or HyperV).
func (h *Harness) Provider() string { return h.opts.Provider }

// LogDir holds the workload cluster's component logs.
func (h *Harness) LogDir() string { return h.logDir }

// Stop stops the guests, the management cluster, the workload cluster and the hypervisor.
func (h *Harness) Stop() error {
	h.cancel()
	if h.Guests != nil {
		<-h.watched
		h.Guests.stopAll()
	}
	var errs []error
	if h.Management != nil {
		errs = append(errs, h.Management.Stop())
	}
	if h.Workload != nil {
		errs = append(errs, h.Workload.Stop())
	}
	if h.VSphere != nil {
		h.VSphere.stop()
	}
	stopHyperV(h.HyperV)
	if h.opts.LogDir == "" && h.logDir != "" {
		errs = append(errs, os.RemoveAll(h.logDir))
	}
	return errors.Join(errs...)
}
