// The bootstrap manager of capwin's "windows" bootstrap provider.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/cluster-api/util/flags"

	"github.com/capwin/capwin/bootstrap/feature"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/setup"
)

type cliOptions struct {
	setup.Options
	leaderElect                                         bool
	leaseDuration, renewDeadline, retryPeriod, syncTime time.Duration
	namespace, healthAddr, profilerAddr                 string
	webhookPort                                         int
	webhookCertDir                                      string
	qps                                                 float32
	burst                                               int
	manager                                             flags.ManagerOptions
	logs                                                *logsv1.LoggingConfiguration
}

func (o *cliOptions) addFlags(fs *pflag.FlagSet) {
	logsv1.AddFlags(o.logs, fs)
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Enable leader election so that only one manager replica is active.")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "Leader election lease duration.")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "Leader election renew deadline.")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "Leader election retry period.")
	fs.StringVar(&o.namespace, "namespace", "", "Only watch this namespace (default: all namespaces).")
	fs.StringVar(&o.WatchFilterValue, "watch-filter", "",
		fmt.Sprintf("Only reconcile objects whose %s label has this value (default: all).", clusterv1.WatchLabel))
	fs.DurationVar(&o.syncTime, "sync-period", 10*time.Minute, "Minimum interval at which watched objects are reconciled again.")
	fs.DurationVar(&o.TokenTTL, "bootstrap-token-ttl", windowsconfig.DefaultTokenTTL,
		"Lifetime of a bootstrap token; extended while the Machine has no Node.")
	fs.IntVar(&o.WindowsConfigConcurrency, "windowsconfig-concurrency", 10, "Number of WindowsConfigs reconciled in parallel.")
	fs.IntVar(&o.ClusterCacheConcurrency, "clustercache-concurrency", 100, "Number of clusters the cluster cache processes in parallel.")
	fs.Float32Var(&o.ClusterCacheClientQPS, "clustercache-client-qps", 20, "QPS of the workload-cluster clients.")
	fs.IntVar(&o.ClusterCacheClientBurst, "clustercache-client-burst", 30, "Burst of the workload-cluster clients.")
	fs.Float32Var(&o.qps, "kube-api-qps", 20, "QPS of the management-cluster client.")
	fs.IntVar(&o.burst, "kube-api-burst", 30, "Burst of the management-cluster client.")
	fs.StringVar(&o.healthAddr, "health-addr", ":9440", "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.profilerAddr, "profiler-address", "", "Address of the pprof endpoint (e.g. localhost:6060); off when empty.")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "Webhook server port.")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "Directory with tls.crt and tls.key for the webhook server.")
	flags.AddManagerOptions(fs, &o.manager)
	feature.MutableGates.AddFlag(fs)
}

func main() {
	o := &cliOptions{logs: logs.NewOptions()}
	o.addFlags(pflag.CommandLine)
	pflag.CommandLine.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(o *cliOptions) error {
	if err := logsv1.ValidateAndApply(o.logs, nil); err != nil {
		return err
	}
	ctrl.SetLogger(klog.Background())
	log := ctrl.Log.WithName("setup")

	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS, restConfig.Burst = o.qps, o.burst
	restConfig.UserAgent = remote.DefaultClusterAPIUserAgent(setup.ControllerName)

	tlsOptions, metricsOptions, err := flags.GetManagerOptions(o.manager)
	if err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                     setup.Scheme(),
		Controller:                 config.Controller{UsePriorityQueue: ptr.To(feature.Gates.Enabled(feature.PriorityQueue))},
		LeaderElection:             o.leaderElect,
		LeaderElectionID:           "capwin-bootstrap-windows-leader-election",
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaseDuration:              &o.leaseDuration,
		RenewDeadline:              &o.renewDeadline,
		RetryPeriod:                &o.retryPeriod,
		HealthProbeBindAddress:     o.healthAddr,
		PprofBindAddress:           o.profilerAddr,
		Metrics:                    *metricsOptions,
		Cache:                      setup.CacheOptions(o.namespace, o.syncTime),
		Client:                     setup.ClientOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{
			Port: o.webhookPort, CertDir: o.webhookCertDir, TLSOpts: tlsOptions,
		}),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := mgr.AddHealthzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if err := setup.Webhooks(mgr); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	if err := setup.Reconcilers(ctx, mgr, o.Options); err != nil {
		return fmt.Errorf("reconcilers: %w", err)
	}
	log.Info("Starting manager")
	return mgr.Start(ctx)
}
