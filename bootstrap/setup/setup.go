// Package setup wires the bootstrap manager. main.go and the test harness both use it, so tests
// run the controllers exactly as production does.
package setup

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/webhooks"
	"github.com/capwin/capwin/internal/manager"
)

// The secured diagnostics endpoint (internal/manager, CAPI's flags.GetManagerOptions) checks
// each scrape's bearer token with a TokenReview and its access with a SubjectAccessReview.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// ControllerName is the manager's name in user agents, events and leader election.
const ControllerName = "capwin-bootstrap-windows-manager"

// Scheme returns a scheme with every type the bootstrap manager reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Options are the tunables main.go exposes as flags.
type Options struct {
	WatchFilterValue         string
	TokenTTL                 time.Duration
	JoinTimeout              time.Duration
	AccountCleanupTimeout    time.Duration
	WindowsConfigConcurrency int
	ClusterCache             manager.ClusterCacheOptions
}

// Reconcilers starts the ClusterCache and registers the WindowsConfig controller.
func Reconcilers(ctx context.Context, mgr ctrl.Manager, o Options) error {
	cc, secretCachingClient, err := manager.ClusterCache(ctx, mgr, ControllerName, o.WatchFilterValue, o.ClusterCache)
	if err != nil {
		return err
	}
	return (&windowsconfig.Reconciler{
		Client:                mgr.GetClient(),
		SecretCachingClient:   secretCachingClient,
		ClusterCache:          cc,
		WatchFilterValue:      o.WatchFilterValue,
		TokenTTL:              o.TokenTTL,
		JoinTimeout:           o.JoinTimeout,
		AccountCleanupTimeout: o.AccountCleanupTimeout,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: max(o.WindowsConfigConcurrency, 1)})
}

// Webhooks registers the admission webhooks.
func Webhooks(mgr ctrl.Manager) error {
	if err := (&webhooks.WindowsConfig{}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	return (&webhooks.WindowsConfigTemplate{}).SetupWebhookWithManager(mgr)
}
