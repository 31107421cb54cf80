// Package manager builds a controller-runtime manager the way both capwin managers need it:
// CAPI's flag set (leader election, probes, secure metrics, TLS options, logging), namespace
// scoping and client rate limits. The bootstrap and infrastructure mains add their own flags.
package manager

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/cluster-api/util/flags"

	"github.com/capwin/capwin/internal/feature"
	"github.com/capwin/capwin/internal/logredact"
)

// Options are the flags every capwin manager has.
type Options struct {
	LeaderElect                                           bool
	LeaderElectNamespace                                  string
	LeaseDuration, RenewDeadline, RetryPeriod, SyncPeriod time.Duration
	Namespace, HealthAddr, ProfilerAddr                   string
	WatchFilterValue                                      string
	WebhookPort                                           int
	WebhookCertDir                                        string
	EnableHTTP2                                           bool
	QPS                                                   float32
	Burst                                                 int
	Manager                                               flags.ManagerOptions
	Logs                                                  *logsv1.LoggingConfiguration
}

// NewOptions returns options with logging defaults.
func NewOptions() *Options { return &Options{Logs: logs.NewOptions()} }

// AddFlags registers the common flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	logsv1.AddFlags(o.Logs, fs)
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "Enable leader election so that only one manager replica is active.")
	fs.StringVar(&o.LeaderElectNamespace, "leader-elect-namespace", "",
		"Namespace of the leader election Lease (default: the Pod's namespace).")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "Leader election lease duration.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "Leader election renew deadline.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "Leader election retry period.")
	fs.StringVar(&o.Namespace, "namespace", "", "Only watch this namespace (default: all namespaces).")
	fs.StringVar(&o.WatchFilterValue, "watch-filter", "",
		fmt.Sprintf("Only reconcile objects whose %s label has this value (default: all).", clusterv1.WatchLabel))
	fs.DurationVar(&o.SyncPeriod, "sync-period", 10*time.Minute, "Minimum interval at which watched objects are reconciled again.")
	fs.Float32Var(&o.QPS, "kube-api-qps", 20, "QPS of the management-cluster client.")
	fs.IntVar(&o.Burst, "kube-api-burst", 30, "Burst of the management-cluster client.")
	fs.StringVar(&o.HealthAddr, "health-addr", ":9440", "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.ProfilerAddr, "profiler-address", "", "Address of the pprof endpoint (e.g. localhost:6060); off when empty.")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "Webhook server port.")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "Directory with tls.crt and tls.key for the webhook server.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", false, "Serve the webhooks and the metrics endpoint over HTTP/2 as well; off by default (HTTP/1.1 only), which keeps HTTP/2 server weaknesses away from them.")
	flags.AddManagerOptions(fs, &o.Manager)
}

// New applies the logging flags and builds the manager with probes bound to the webhook server.
func New(o *Options, scheme *runtime.Scheme, name string, priorityQueue bool) (ctrl.Manager, error) {
	if err := logsv1.ValidateAndApply(o.Logs, nil); err != nil {
		return nil, err
	}
	logredact.Apply(o.Logs.Format)
	ctrl.SetLogger(logredact.Logger(klog.Background()))
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	return NewForConfig(restConfig, o, scheme, name, priorityQueue)
}

// NewForConfig builds the manager of New on restConfig; each of with may change the options
// before the manager is made (the RBAC test runs both managers in one process as their
// ServiceAccounts: the leader election namespace of a Pod, no controller name validation).
func NewForConfig(restConfig *rest.Config, o *Options, scheme *runtime.Scheme, name string, priorityQueue bool,
	with ...func(*ctrl.Options)) (ctrl.Manager, error) {
	restConfig.QPS, restConfig.Burst = o.QPS, o.Burst
	restConfig.UserAgent = remote.DefaultClusterAPIUserAgent(name)
	tlsOptions, metricsOptions, err := ServerOptions(o)
	if err != nil {
		return nil, err
	}
	opts := ctrl.Options{
		Scheme:                     scheme,
		Controller:                 config.Controller{UsePriorityQueue: ptr.To(priorityQueue)},
		LeaderElection:             o.LeaderElect,
		LeaderElectionID:           LeaseName(name, o.WatchFilterValue),
		LeaderElectionNamespace:    o.LeaderElectNamespace,
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaseDuration:              &o.LeaseDuration,
		RenewDeadline:              &o.RenewDeadline,
		RetryPeriod:                &o.RetryPeriod,
		HealthProbeBindAddress:     o.HealthAddr,
		PprofBindAddress:           o.ProfilerAddr,
		Metrics:                    *metricsOptions,
		Cache:                      CacheOptions(o.Namespace, o.SyncPeriod),
		Client:                     ClientOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{
			Port: o.WebhookPort, CertDir: o.WebhookCertDir, TLSOpts: tlsOptions,
		}),
	}
	for _, f := range with {
		f(&opts)
	}
	mgr, err := ctrl.NewManager(restConfig, opts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, err
	}
	return mgr, nil
}

// LeaseName is the leader election Lease of a manager: name-leader-election, and for a manager
// with a watch filter the value too, so the managers of different shards (one Deployment per
// --watch-filter value) each elect their own leader. The value becomes one DNS label: lower
// case, [a-z0-9-] only; a value it changes, or one too long, is shortened and gets the first
// 8 hex digits of its SHA-256, so two values never share a Lease.
func LeaseName(name, watchFilter string) string {
	id := name + "-leader-election"
	if watchFilter == "" {
		return id
	}
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, watchFilter)
	const maxValue = 63 - len("-12345678") // a DNS label of its own, hash included
	if clean != watchFilter || len(clean) > maxValue {
		sum := sha256.Sum256([]byte(watchFilter))
		clean = strings.Trim(clean[:min(len(clean), maxValue)], "-") + "-" + hex.EncodeToString(sum[:4])
	}
	return id + "-" + strings.Trim(clean, "-")
}

// CacheOptions scopes the manager cache to a namespace ("" = all) and caches only the Secrets
// labelled with a cluster name (what CAPI's ClusterCache reads).
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

// ClientOptions makes the default client read Secrets and ConfigMaps live: user Secrets (files,
// identities) have no cluster label and must not be cached cluster-wide.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}}
}

// ClusterCacheOptions are the workload-cluster client flags.
type ClusterCacheOptions struct {
	Concurrency int
	QPS         float32
	Burst       int
}

// AddFlags registers the cluster cache flags.
func (o *ClusterCacheOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Concurrency, "clustercache-concurrency", 100, "Number of clusters the cluster cache processes in parallel.")
	fs.Float32Var(&o.QPS, "clustercache-client-qps", 20, "QPS of the workload-cluster clients.")
	fs.IntVar(&o.Burst, "clustercache-client-burst", 30, "Burst of the workload-cluster clients.")
}

// ClusterCache starts CAPI's ClusterCache (connections to the workload clusters). It returns the
// client that reads cluster-labelled Secrets from the cache, too.
func ClusterCache(ctx context.Context, mgr ctrl.Manager, name, watchFilter string, o ClusterCacheOptions) (clustercache.ClusterCache, client.Client, error) {
	secretCachingClient, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("secret caching client: %w", err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache:        clustercache.CacheOptions{DefaultTransform: ctrlcache.TransformStripManagedFields()},
		Client: clustercache.ClientOptions{
			QPS: o.QPS, Burst: o.Burst,
			UserAgent: remote.DefaultClusterAPIUserAgent(name),
			Cache:     clustercache.ClientCacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}},
		},
		WatchFilterValue: watchFilter,
	}, controller.Options{MaxConcurrentReconciles: max(o.Concurrency, 1)})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster cache: %w", err)
	}
	return cc, secretCachingClient, nil
}

// Main is the whole of a manager's main: flags (common ones, the cluster cache's, feature gates
// and those addFlags registers), the manager, then start (webhooks, reconcilers) and run until
// a signal. It exits the process on error.
func Main(name string, scheme *runtime.Scheme, addFlags func(*pflag.FlagSet), start func(context.Context, ctrl.Manager, *Options) error) {
	common := NewOptions()
	fs := pflag.CommandLine
	common.AddFlags(fs)
	addFlags(fs)
	feature.MutableGates.AddFlag(fs)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()
	if err := run(name, scheme, common, start); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(name string, scheme *runtime.Scheme, common *Options, start func(context.Context, ctrl.Manager, *Options) error) error {
	mgr, err := New(common, scheme, name, feature.Gates.Enabled(feature.PriorityQueue))
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if err := start(ctx, mgr, common); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Starting manager", "name", name)
	return mgr.Start(ctx)
}

// ServerOptions are the TLS options of the webhook server and the metrics server's options, from
// Cluster API's manager flags and --enable-http2: without it both servers offer HTTP/1.1 alone
// (as Kubernetes' own components and kubebuilder's projects do), so HTTP/2 server weaknesses (Rapid
// Reset, HPACK and flow control bugs) do not reach them.
func ServerOptions(o *Options) ([]func(*tls.Config), *metricsserver.Options, error) {
	tlsOptions, metricsOptions, err := flags.GetManagerOptions(o.Manager)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid flags: %w", err)
	}
	if !o.EnableHTTP2 {
		tlsOptions = append(slices.Clip(tlsOptions), func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
		if metricsOptions.SecureServing {
			metricsOptions.TLSOpts = tlsOptions
		}
	}
	return tlsOptions, metricsOptions, nil
}
