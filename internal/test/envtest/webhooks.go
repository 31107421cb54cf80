package envtest

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/capwin/capwin/internal/manager"
)

// ServeWebhooks starts a manager that serves the webhooks register adds, at the address the
// API server's webhook configurations point to, and returns once the server answers. cancel
// stops it.
func (e *Environment) ServeWebhooks(scheme *runtime.Scheme, register func(ctrl.Manager) error) (cancel context.CancelFunc, err error) {
	_, cancel, err = e.StartManager(scheme, func(_ context.Context, mgr ctrl.Manager) error { return register(mgr) })
	return cancel, err
}

// StartManager starts a manager with the production cache and client settings and a webhook
// server at the address the API server's webhook configurations point to. setup registers
// webhooks and controllers; StartManager returns once the cache is synced and the webhook
// server answers (when the environment installed webhooks). cancel stops the manager. tune
// adjusts the options first.
func (e *Environment) StartManager(scheme *runtime.Scheme, setup func(context.Context, ctrl.Manager) error, tune ...func(*ctrl.Options)) (ctrl.Manager, context.CancelFunc, error) {
	opts := e.WebhookInstallOptions
	mgrOpts := ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   manager.CacheOptions("", time.Minute),
		Client:  manager.ClientOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		}),
	}
	for _, t := range tune {
		t(&mgrOpts)
	}
	mgr, err := ctrl.NewManager(e.Config, mgrOpts)
	if err != nil {
		return nil, nil, err
	}
	cancel, err := run(mgr, setup)
	if err != nil {
		return nil, nil, err
	}
	if len(opts.Paths) == 0 {
		return mgr, cancel, nil // no webhooks installed: the server is neither needed nor started
	}
	for deadline := time.Now().Add(30 * time.Second); mgr.GetWebhookServer().StartedChecker()(nil) != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			return nil, nil, fmt.Errorf("webhook server not ready")
		}
	}
	return mgr, cancel, nil
}

// StartCountedManager starts a manager with the production cache and client settings whose
// requests to the API server pass through wrap (e.g. apicount.Counter.Wrap). It serves no
// webhooks and may run controllers of the same names as another manager of the test. setup
// registers what it runs; StartCountedManager returns once the cache is synced.
func (e *Environment) StartCountedManager(scheme *runtime.Scheme, wrap transport.WrapperFunc, setup func(context.Context, ctrl.Manager) error) (ctrl.Manager, context.CancelFunc, error) {
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: manager.CacheOptions("", time.Minute), Client: manager.ClientOptions(),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, nil, err
	}
	cancel, err := run(mgr, setup)
	if err != nil {
		return nil, nil, err
	}
	return mgr, cancel, nil
}

// run registers what setup adds, starts the manager and returns once its cache is synced.
func run(mgr ctrl.Manager, setup func(context.Context, ctrl.Manager) error) (context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := setup(ctx, mgr); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Println("manager:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("cache did not sync")
	}
	return cancel, nil
}

// Direct is a client of the environment's API server without a cache, for a suite's own reads
// and writes: a read right after a write sees it (a manager's cached client may not yet, and a
// check like "the object keeps no finalizer" would then fail on NotFound).
func (e *Environment) Direct(scheme *runtime.Scheme) (client.Client, error) {
	return client.New(e.Config, client.Options{Scheme: scheme})
}
