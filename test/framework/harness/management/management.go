package management

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"

	addonsv1beta1 "sigs.k8s.io/cluster-api/api/addons/v1beta1" //nolint:staticcheck // SA1019: registered on purpose: CAPI still serves and converts this old API version
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"      //nolint:staticcheck // SA1019: registered on purpose: CAPI still serves and converts this old API version
	ipamv1alpha1 "sigs.k8s.io/cluster-api/api/ipam/v1alpha1"       //nolint:staticcheck // SA1019: registered on purpose: CAPI still serves and converts this old API version
	ipamv1beta1 "sigs.k8s.io/cluster-api/api/ipam/v1beta1"         //nolint:staticcheck // SA1019: registered on purpose: CAPI still serves and converts this old API version
	runtimev1alpha1 "sigs.k8s.io/cluster-api/api/runtime/v1alpha1" //nolint:staticcheck // SA1019: registered on purpose: CAPI still serves and converts this old API version
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	bootstrapsetup "github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/test/envtest"
)

// Options configures Start.
type Options struct {
	// WatchFilter is the cluster.x-k8s.io/watch-filter value of every controller ("" = all).
	WatchFilter string
	// Infrastructure are capwin's infrastructure tunables (poll intervals, concurrency, vCenter
	// sessions); WatchFilterValue is replaced by WatchFilter. A nil Sessions is created and closed
	// by Stop.
	Infrastructure infrasetup.Options
	// Bootstrap are capwin's bootstrap tunables (token TTL, concurrency); WatchFilterValue is
	// replaced by WatchFilter.
	Bootstrap bootstrapsetup.Options
	// InfrastructureElsewhere leaves capwin's infrastructure reconcilers to other managers (the
	// sharding test runs them as processes); its webhooks are still served here.
	InfrastructureElsewhere bool
}

// Management is a running management cluster.
type Management struct {
	Env *envtest.Environment
	// Client is the harness's own client: it reads through its own informers (never the
	// manager's, so it keeps working across RestartManager) and writes to the apiserver.
	Client  client.Client
	Manager ctrl.Manager
	// ClusterCache is CAPI core's (capwin's providers have their own, as in production).
	ClusterCache clustercache.ClusterCache

	sessions   *session.Sessions
	setup      func(context.Context, ctrl.Manager) error
	cancel     context.CancelFunc
	observer   context.CancelFunc
	webhookDir string
	stopOnce   sync.Once
	stopErr    error
}

// Scheme has every type of CAPI core's, capwin's infrastructure and bootstrap managers.
func Scheme() *runtime.Scheme {
	s := infrasetup.Scheme() // client-go, CAPI core v1beta2, IPAM v1beta2, capwin infrastructure
	for _, add := range []func(*runtime.Scheme) error{
		bootstrapv1.AddToScheme, apiextensionsv1.AddToScheme, clusterv1beta1.AddToScheme,
		addonsv1beta1.AddToScheme, addonsv1.AddToScheme, runtimev1alpha1.AddToScheme, runtimev1.AddToScheme,
		ipamv1alpha1.AddToScheme, ipamv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Start runs the apiserver with all webhook configurations and the manager; it returns once
// the caches are synced and the webhook server answers. The manager also stops when ctx ends.
func Start(ctx context.Context, opts Options) (_ *Management, retErr error) {
	m := &Management{sessions: opts.Infrastructure.Sessions}
	defer func() {
		if retErr != nil {
			_ = m.Stop()
		}
	}()
	if m.sessions == nil {
		m.sessions = &session.Sessions{}
	}
	dir, err := webhookConfigs()
	if err != nil {
		return nil, err
	}
	m.webhookDir = dir
	if m.Env, err = envtest.Start(dir); err != nil {
		return nil, err
	}
	if err := installControlPlaneCRD(m.Env.Config); err != nil {
		return nil, err
	}
	infra, boot := opts.Infrastructure, opts.Bootstrap
	infra.WatchFilterValue, boot.WatchFilterValue, infra.Sessions = opts.WatchFilter, opts.WatchFilter, m.sessions
	m.setup = func(ctx context.Context, mgr ctrl.Manager) error {
		mgr = unvalidatedNames{mgr}
		cc, err := setupCAPI(ctx, mgr, opts.WatchFilter)
		if err != nil {
			return fmt.Errorf("cluster api core: %w", err)
		}
		m.ClusterCache = cc
		if err := infrasetup.Webhooks(mgr); err != nil {
			return fmt.Errorf("infrastructure webhooks: %w", err)
		}
		if !opts.InfrastructureElsewhere {
			if err := infrasetup.Reconcilers(ctx, mgr, infra); err != nil {
				return fmt.Errorf("infrastructure reconcilers: %w", err)
			}
		}
		if err := bootstrapsetup.Webhooks(mgr); err != nil {
			return fmt.Errorf("bootstrap webhooks: %w", err)
		}
		if err := bootstrapsetup.Reconcilers(ctx, mgr, boot); err != nil {
			return fmt.Errorf("bootstrap reconcilers: %w", err)
		}
		return setupControlPlane(ctx, mgr, opts.WatchFilter)
	}
	if m.Manager, m.cancel, err = m.Env.StartManager(Scheme(), m.setup, keepManagedFields); err != nil {
		return nil, err
	}
	if m.Client, err = m.startObserver(ctx); err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = m.Stop() })
	return m, nil
}

// Stop stops the manager, CAPI's ClusterCache, the vCenter sessions and the apiserver. It may be
// called again. CAPI's ClusterCache watches Nodes of workload clusters; a workload apiserver
// waits for open watches when it stops (20s with envtest), so it is shut down here. capwin's
// two ClusterCaches cannot be reached from here: once they cache workload objects (the
// infrastructure provider reads Nodes through its cached client when it links a Node), the
// same wait comes back.
func (m *Management) Stop() error {
	m.stopOnce.Do(func() {
		if m.cancel != nil {
			m.cancel()
		}
		if m.observer != nil {
			m.observer()
		}
		if cc, ok := m.ClusterCache.(interface{ Shutdown() }); ok {
			cc.Shutdown() // CAPI's test hook: ends its watches on workload apiservers
		}
		m.sessions.Close(context.Background())
		if m.Env != nil {
			m.stopErr = m.Env.Stop()
		}
		if m.webhookDir != "" {
			m.stopErr = errors.Join(m.stopErr, os.RemoveAll(m.webhookDir))
		}
	})
	return m.stopErr
}

// keepManagedFields keeps metadata.managedFields in the cache, as CAPI core's manager does:
// its MachineDeployment and MachineSet controllers inspect them (server-side apply ownership)
// and, on objects that seem to have none, repair them and end the reconcile — with capwin's
// cache transform (which strips them to save memory) a MachineDeployment would never scale
// after creating its MachineSet.
func keepManagedFields(o *ctrl.Options) { o.Cache.DefaultTransform = nil }

// unvalidatedNames is the manager as the providers' setup functions see it: its controllers
// skip controller-runtime's process-wide unique-name check (see the package comment).
type unvalidatedNames struct{ ctrl.Manager }

func (m unvalidatedNames) GetControllerOptions() config.Controller {
	o := m.Manager.GetControllerOptions()
	o.SkipNameValidation = ptr.To(true)
	return o
}
