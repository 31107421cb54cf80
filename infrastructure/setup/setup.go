// Package setup wires the infrastructure manager. main.go, the tests and the benchmark use it, so
// they run the controllers exactly as production does.
package setup

import (
	"cmp"
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/reconcilers/clusteridentity"
	"github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/reconcilers/vcentercluster"
	"github.com/capwin/capwin/infrastructure/reconcilers/vcentermachinetemplate"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
	"github.com/capwin/capwin/internal/manager"
)

// The secured diagnostics endpoint (internal/manager, CAPI's flags.GetManagerOptions) checks
// each scrape's bearer token with a TokenReview and its access with a SubjectAccessReview.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// ControllerName is the manager's name in user agents, events and leader election.
const ControllerName = "capwin-infrastructure-manager"

// Finalizers of the machine kinds (with a slash, as the API server expects).
const VCenterMachineFinalizer = "infrastructure.cluster.x-k8s.io/vcentermachine"

// Scheme returns a scheme with every type the infrastructure manager reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1.AddToScheme, ipamv1.AddToScheme, infrav1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Options are the tunables main.go exposes as flags.
type Options struct {
	WatchFilterValue string
	// Namespace is the only namespace the manager watches ("" for all).
	Namespace                 string
	VCenterMachineConcurrency int
	VCenterClusterConcurrency int
	HyperVMachineConcurrency  int
	HyperVClusterConcurrency  int
	ClusterCache              manager.ClusterCacheOptions
	// PollInterval and TaskPollInterval: see machine.Reconciler.
	PollInterval     time.Duration
	TaskPollInterval time.Duration
	// Sessions is the vCenter session cache; nil makes one sized for the concurrency.
	Sessions *session.Sessions
	// Conns is the Hyper-V host connection cache; nil makes one.
	Conns *hyperv.Conns
	// HostRecheck is how often every Hyper-V host is probed (default 1m).
	HostRecheck time.Duration
	// Gate is shared by the vCenter sessions and the Hyper-V connections: a refused credential is
	// not tried again until its Secret changes, an unreachable server backs off; nil makes one.
	Gate *logingate.Gate
	// CredentialRecheck: see machine.Reconciler.
	CredentialRecheck time.Duration
	// IdentityNamespace is the manager's own namespace, where the Secrets of
	// VCenterClusterIdentities and HyperVClusterIdentities live.
	IdentityNamespace string
	// CreateGrace: see machine.Reconciler (tests shorten it).
	CreateGrace time.Duration
	// NoVCenterWatch turns the vCenter watch off: VCenterMachines then rely on the polls alone.
	NoVCenterWatch bool
	// VCenterDeleteTaskWait: see machine.Kind.DeleteTaskWait; zero is DefaultVCenterDeleteTaskWait,
	// negative turns the wait off.
	VCenterDeleteTaskWait time.Duration
	// Wakes receives the vCenter watch's wake-ups (nil makes one); tests read its counts.
	Wakes *machine.Wakes
}

// Reconcilers starts the ClusterCache and registers the infrastructure controllers.
func Reconcilers(ctx context.Context, mgr ctrl.Manager, o Options) error {
	cc, _, err := manager.ClusterCache(ctx, mgr, ControllerName, o.WatchFilterValue, o.ClusterCache)
	if err != nil {
		return err
	}
	if o.Gate == nil {
		o.Gate = &logingate.Gate{}
	}
	secrets, err := LoginSecrets(mgr, o)
	if err != nil {
		return err
	}
	provider := VCenterProvider(mgr, secrets, o)
	if err := identityReconcilers(mgr, o.IdentityNamespace, o.WatchFilterValue); err != nil {
		return err
	}
	if err := (&vcentercluster.Reconciler{
		Client: mgr.GetClient(), Provider: provider, WatchFilterValue: o.WatchFilterValue,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: max(o.VCenterClusterConcurrency, 1)}); err != nil {
		return err
	}
	if err := (&vcentermachinetemplate.Reconciler{
		Client: mgr.GetClient(), Provider: provider, WatchFilterValue: o.WatchFilterValue,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 2}); err != nil {
		return err
	}
	vcenterMachines := NewVCenterMachineReconciler(mgr.GetClient(), mgr.GetAPIReader(), cc, provider, o)
	if sessions := provider.Sessions; !o.NoVCenterWatch && sessions.Wake == nil {
		vcenterMachines.Wakes = o.Wakes
		if vcenterMachines.Wakes == nil {
			vcenterMachines.Wakes = &machine.Wakes{}
		}
		sessions.Wake = vcenterMachines.Wakes.Wake
	}
	if err := vcenterMachines.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: max(o.VCenterMachineConcurrency, 1)}); err != nil {
		return err
	}
	hypervMachines, err := hyperVReconcilers(ctx, mgr, cc, secrets, o)
	if err != nil {
		return err
	}
	return mgr.Add(&machine.StateCounts{Reader: mgr.GetCache(), Kinds: []machine.Kind{vcenterMachines.Kind, hypervMachines.Kind},
		WatchFilterValue: o.WatchFilterValue})
}

// LoginSecrets is the manager's reader of login Secrets: a cache, started with the manager, of
// the Secrets capwin labelled as logins (credentials.NewCache) in the watched namespace and the
// identity namespace (all namespaces when the manager watches all).
func LoginSecrets(mgr ctrl.Manager, o Options) (client.Reader, error) {
	var namespaces []string
	if o.Namespace != "" {
		namespaces = append(namespaces, o.Namespace)
		if o.IdentityNamespace != "" && o.IdentityNamespace != o.Namespace {
			namespaces = append(namespaces, o.IdentityNamespace)
		}
	}
	return credentials.NewCache(mgr, mgr.GetAPIReader(), namespaces...)
}

// VCenterProvider is the vCenter provider of the manager: o's session cache (one sized for the
// concurrency when nil) and login gate, login Secrets from secrets.
func VCenterProvider(mgr ctrl.Manager, secrets client.Reader, o Options) *vcenter.Provider {
	return &vcenter.Provider{Client: mgr.GetClient(), Secrets: secrets, Sessions: VCenterSessions(o), IdentityNamespace: o.IdentityNamespace}
}

// VCenterSessions is o's session cache (one when nil) with the manager's defaults filled in:
// idle connections for every worker, o's login gate, the manager's user agent.
func VCenterSessions(o Options) *session.Sessions {
	sessions := o.Sessions
	if sessions == nil {
		sessions = &session.Sessions{}
	}
	if sessions.MaxIdleConnsPerHost == 0 {
		sessions.MaxIdleConnsPerHost = o.VCenterMachineConcurrency + o.VCenterClusterConcurrency
	}
	if sessions.Gate == nil {
		sessions.Gate = o.Gate
	}
	if sessions.UserAgent == "" {
		sessions.UserAgent = ControllerName
	}
	return sessions
}

// identityReconcilers registers the controllers of both cluster identity kinds.
func identityReconcilers(mgr ctrl.Manager, namespace, watchFilter string) error {
	for _, newObject := range []func() client.Object{
		func() client.Object { return &infrav1.VCenterClusterIdentity{} },
		func() client.Object { return &infrav1.HyperVClusterIdentity{} },
	} {
		r := &clusteridentity.Reconciler{Client: mgr.GetClient(), Namespace: namespace, NewObject: newObject, WatchFilterValue: watchFilter}
		if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
			return err
		}
	}
	return nil
}

// NewVCenterMachineReconciler is the machine lifecycle for VCenterMachines on the vCenter
// backend; tests build extra ones to play a restarted manager.
func NewVCenterMachineReconciler(c client.Client, apiReader client.Reader, cc clustercache.ClusterCache, provider *vcenter.Provider, o Options) *machine.Reconciler {
	return newMachineReconciler(c, apiReader, cc, o, machine.Kind{
		Name:           "vcentermachine",
		Finalizer:      VCenterMachineFinalizer,
		NewObject:      func() hypervisor.Object { return &infrav1.VCenterMachine{} },
		NewList:        func() client.ObjectList { return &infrav1.VCenterMachineList{} },
		NewCluster:     func() client.Object { return &infrav1.VCenterCluster{} },
		Backend:        provider.Backend,
		Admit:          admit.Webhook[*infrav1.VCenterMachine](&webhooks.VCenterMachine{}, &webhooks.VCenterMachine{}),
		AdmitCluster:   admit.Webhook[*infrav1.VCenterCluster](nil, &webhooks.VCenterCluster{}),
		DeleteTaskWait: cmp.Or(o.VCenterDeleteTaskWait, DefaultVCenterDeleteTaskWait),
	})
}

// DefaultVCenterDeleteTaskWait is how long a VCenterMachine's delete waits in its reconcile for
// its power-off and destroy tasks (--vcenter-delete-task-wait).
const DefaultVCenterDeleteTaskWait = 2 * time.Second

// newMachineReconciler is the machine lifecycle of one kind with the manager's settings.
func newMachineReconciler(c client.Client, apiReader client.Reader, cc clustercache.ClusterCache, o Options, kind machine.Kind) *machine.Reconciler {
	return &machine.Reconciler{
		Client:            c,
		APIReader:         apiReader,
		ClusterCache:      cc,
		WatchFilterValue:  o.WatchFilterValue,
		PollInterval:      o.PollInterval,
		TaskPollInterval:  o.TaskPollInterval,
		CredentialRecheck: o.CredentialRecheck,
		CreateGrace:       o.CreateGrace,
		Kind:              kind,
	}
}

// Webhooks registers the admission webhooks.
func Webhooks(mgr ctrl.Manager) error { return webhooks.SetupWithManager(mgr) }
