// Package setup wires the bootstrap manager. main.go and the test harness both use it, so tests
// run the controllers exactly as production does.
package setup

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/controllers/remote"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/webhooks"
)

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
	WindowsConfigConcurrency int
	ClusterCacheConcurrency  int
	ClusterCacheClientQPS    float32
	ClusterCacheClientBurst  int
}

// CacheOptions scopes the manager cache to a namespace ("" = all) and caches only the Secrets the
// controllers read through the caching client: those labelled with a cluster name.
func CacheOptions(namespace string, syncPeriod time.Duration) ctrlcache.Options {
	var namespaces map[string]ctrlcache.Config
	if namespace != "" {
		namespaces = map[string]ctrlcache.Config{namespace: {}}
	}
	req, _ := labels.NewRequirement(clusterv1.ClusterNameLabel, selection.Exists, nil)
	return ctrlcache.Options{
		DefaultNamespaces: namespaces,
		SyncPeriod:        &syncPeriod,
		DefaultTransform:  ctrlcache.TransformStripManagedFields(),
		ByObject: map[client.Object]ctrlcache.ByObject{
			&corev1.Secret{}: {Label: labels.NewSelector().Add(*req)},
		},
	}
}

// ClientOptions makes the default client read Secrets and ConfigMaps live: user file Secrets have
// no cluster label and must not be cached cluster-wide.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}}
}

// Reconcilers starts the ClusterCache and registers the WindowsConfig controller.
func Reconcilers(ctx context.Context, mgr ctrl.Manager, o Options) error {
	secretCachingClient, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return fmt.Errorf("secret caching client: %w", err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache:        clustercache.CacheOptions{DefaultTransform: ctrlcache.TransformStripManagedFields()},
		Client: clustercache.ClientOptions{
			QPS: o.ClusterCacheClientQPS, Burst: o.ClusterCacheClientBurst,
			UserAgent: remote.DefaultClusterAPIUserAgent(ControllerName),
			Cache:     clustercache.ClientCacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}},
		},
		WatchFilterValue: o.WatchFilterValue,
	}, controller.Options{MaxConcurrentReconciles: max(o.ClusterCacheConcurrency, 1)})
	if err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	return (&windowsconfig.Reconciler{
		Client:              mgr.GetClient(),
		SecretCachingClient: secretCachingClient,
		ClusterCache:        cc,
		WatchFilterValue:    o.WatchFilterValue,
		TokenTTL:            o.TokenTTL,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: max(o.WindowsConfigConcurrency, 1)})
}

// Webhooks registers the admission webhooks.
func Webhooks(mgr ctrl.Manager) error {
	if err := (&webhooks.WindowsConfig{}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	return (&webhooks.WindowsConfigTemplate{}).SetupWebhookWithManager(mgr)
}
