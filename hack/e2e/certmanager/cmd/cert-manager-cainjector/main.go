/*
Copyright The capwin Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command cert-manager-cainjector injects CA bundles into
// Validating/MutatingWebhookConfigurations, APIServices and
// CustomResourceDefinitions (conversion webhooks) that carry one of the
// cert-manager.io/inject-ca-from(-secret) or inject-apiserver-ca
// annotations. The reconcilers are the root module's
// pkg/controller/cainjector; this main only wires up a controller-runtime
// manager around them.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	config "github.com/cert-manager/cert-manager/internal/apis/config/cainjector"
	configscheme "github.com/cert-manager/cert-manager/internal/apis/config/cainjector/scheme"
	"github.com/cert-manager/cert-manager/internal/apis/config/cainjector/validation"
	"github.com/cert-manager/cert-manager/internal/kube"
	configv1alpha1 "github.com/cert-manager/cert-manager/pkg/apis/config/cainjector/v1alpha1"
	"github.com/cert-manager/cert-manager/pkg/cainjector/configfile"
	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"
	"github.com/cert-manager/cert-manager/pkg/util/profiling"

	"github.com/cert-manager/cert-manager/cmd/capwin-e2e/internal/cli"
)

const (
	leaseName = "cert-manager-cainjector-leader-election"
	managedBy = "cert-manager-cainjector"
)

func main() {
	cli.Main(cli.Component[config.CAInjectorConfiguration]{
		Name:        "cainjector",
		Description: "cert-manager cainjector: copies CA certificates into webhook configurations, APIServices and CRDs.",
		Defaults:    defaults,
		BindFlags:   bindFlags,
		LoadFile: func(path string) (*config.CAInjectorConfiguration, error) {
			f := configfile.New()
			if err := cli.LoadConfigFile(path, f); err != nil {
				return nil, err
			}
			return f.Config, nil
		},
		FeatureGates: func(c *config.CAInjectorConfiguration) map[string]bool { return c.FeatureGates },
		Logging:      func(c *config.CAInjectorConfiguration) *logsapi.LoggingConfiguration { return &c.Logging },
		Validate: func(c *config.CAInjectorConfiguration) error {
			return validation.ValidateCAInjectorConfiguration(c, nil).ToAggregate()
		},
		Run: run,
	})
}

// defaults converts a defaulted v1alpha1 object into the internal type,
// which is how upstream obtains its default configuration too.
func defaults() (*config.CAInjectorConfiguration, error) {
	scheme, _, err := configscheme.NewSchemeAndCodecs()
	if err != nil {
		return nil, err
	}
	versioned := &configv1alpha1.CAInjectorConfiguration{}
	scheme.Default(versioned)
	out := &config.CAInjectorConfiguration{}
	if err := scheme.Convert(versioned, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func bindFlags(fs *pflag.FlagSet, c *config.CAInjectorConfiguration) {
	fs.StringVar(&c.KubeConfig, "kubeconfig", c.KubeConfig, "Path to a kubeconfig; in-cluster configuration is used when empty.")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "Only watch injectables and sources in this namespace (all namespaces when empty).")
	fs.StringSliceVar(&c.IgnoreNamespaces, "ignore-namespaces", c.IgnoreNamespaces, "Namespaces whose Secrets/Certificates are never used as CA sources.")
	cli.AddLeaderElectionFlags(fs, &c.LeaderElectionConfig)
	fs.BoolVar(&c.EnableDataSourceConfig.Certificates, "enable-certificates-data-source", c.EnableDataSourceConfig.Certificates, "Support the cert-manager.io/inject-ca-from annotation (needs the Certificate CRD).")
	fs.BoolVar(&c.EnableInjectableConfig.ValidatingWebhookConfigurations, "enable-validatingwebhookconfigurations-injectable", c.EnableInjectableConfig.ValidatingWebhookConfigurations, "Inject into ValidatingWebhookConfigurations.")
	fs.BoolVar(&c.EnableInjectableConfig.MutatingWebhookConfigurations, "enable-mutatingwebhookconfigurations-injectable", c.EnableInjectableConfig.MutatingWebhookConfigurations, "Inject into MutatingWebhookConfigurations.")
	fs.BoolVar(&c.EnableInjectableConfig.CustomResourceDefinitions, "enable-customresourcedefinitions-injectable", c.EnableInjectableConfig.CustomResourceDefinitions, "Inject into CustomResourceDefinitions.")
	fs.BoolVar(&c.EnableInjectableConfig.APIServices, "enable-apiservices-injectable", c.EnableInjectableConfig.APIServices, "Inject into APIServices.")
	fs.BoolVar(&c.EnablePprof, "enable-profiling", c.EnablePprof, "Serve Go pprof on --profiler-address.")
	fs.StringVar(&c.PprofAddress, "profiler-address", c.PprofAddress, "Listen address of the profiler.")
	fs.Var(cliflag.NewMapStringBool(&c.FeatureGates), "feature-gates", "key=value pairs of feature gates. Known gates:\n"+strings.Join(utilfeature.DefaultFeatureGate.KnownFeatures(), "\n"))
	fs.StringVar(&c.MetricsListenAddress, "metrics-listen-address", c.MetricsListenAddress, "Listen address of the metrics endpoint; 0 disables it.")
	cli.AddMetricsTLSFlags(fs, &c.MetricsTLSConfig)
	logf.AddFlags(&c.Logging, fs)
}

func run(ctx context.Context, c *config.CAInjectorConfiguration) error {
	log := logf.FromContext(ctx)
	ctrl.SetLogger(log)

	restConfig, err := kube.BuildClientConfig("", c.KubeConfig)
	if err != nil {
		return fmt.Errorf("building client configuration: %w", err)
	}
	restConfig = util.RestConfigWithUserAgent(restConfig, "cainjector")

	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))

	var namespaces map[string]cache.Config
	if c.Namespace != "" {
		namespaces = map[string]cache.Config{c.Namespace: {}}
	}

	metricsCerts := cli.CertificateSource(log, c.MetricsTLSConfig, restConfig, managedBy)
	metrics := metricsserver.Options{BindAddress: c.MetricsListenAddress}
	if metricsCerts != nil {
		suites, err := cliflag.TLSCipherSuites(c.MetricsTLSConfig.CipherSuites)
		if err != nil {
			return err
		}
		minVersion, err := cliflag.TLSVersion(c.MetricsTLSConfig.MinTLSVersion)
		if err != nil {
			return err
		}
		metrics.SecureServing = true
		metrics.TLSOpts = []func(*tls.Config){func(t *tls.Config) {
			t.CipherSuites = suites
			t.MinVersion = minVersion
			t.GetCertificate = metricsCerts.GetCertificate
		}}
	}

	le := c.LeaderElectionConfig
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			ReaderFailOnMissingInformer: true,
			DefaultNamespaces:           namespaces,
		},
		// Secrets are read straight from the API server; only their metadata
		// is watched (see cainjector.RegisterAllInjectors), so the cache does
		// not hold every Secret in the cluster.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},

		LeaderElection:                le.Enabled,
		LeaderElectionNamespace:       le.Namespace,
		LeaderElectionID:              leaseName,
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaderElectionReleaseOnCancel: true,
		LeaderElectionLabels:          map[string]string{"app.kubernetes.io/managed-by": managedBy},
		LeaseDuration:                 &le.LeaseDuration,
		RenewDeadline:                 &le.RenewDeadline,
		RetryPeriod:                   &le.RetryPeriod,
		Metrics:                       metrics,
	})
	if err != nil {
		return fmt.Errorf("creating controller manager: %w", err)
	}
	if metricsCerts != nil {
		if err := mgr.Add(metricsCerts); err != nil {
			return err
		}
	}
	if c.EnablePprof {
		if err := addProfiler(ctx, mgr, c.PprofAddress); err != nil {
			return err
		}
	}

	if c.EnableDataSourceConfig.Certificates {
		if err := waitForCertificateCRD(ctx, mgr); err != nil {
			return err
		}
	}

	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		Namespace:                    c.Namespace,
		IgnoreNamespaces:             c.IgnoreNamespaces,
		EnableCertificatesDataSource: c.EnableDataSourceConfig.Certificates,
		EnabledReconcilersFor: map[string]bool{
			cainjector.ValidatingWebhookConfigurationName: c.EnableInjectableConfig.ValidatingWebhookConfigurations,
			cainjector.MutatingWebhookConfigurationName:   c.EnableInjectableConfig.MutatingWebhookConfigurations,
			cainjector.CustomResourceDefinitionName:       c.EnableInjectableConfig.CustomResourceDefinitions,
			cainjector.APIServiceName:                     c.EnableInjectableConfig.APIServices,
		},
	}); err != nil {
		return fmt.Errorf("registering injectors: %w", err)
	}

	return mgr.Start(ctx)
}

// waitForCertificateCRD blocks (up to five minutes) until the Certificate CRD
// exists: the inject-ca-from reconcilers watch Certificates.
func waitForCertificateCRD(ctx context.Context, mgr manager.Manager) error {
	log := logf.FromContext(ctx)
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Name: "certificates.cert-manager.io"}, &apiext.CustomResourceDefinition{})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			log.Info("waiting for the certificates.cert-manager.io CRD")
			return false, nil
		default:
			return false, fmt.Errorf("looking up the certificates.cert-manager.io CRD: %w", err)
		}
	})
}

// everyReplica is a manager.Runnable that runs on every replica, whether it
// holds the leader lease or not.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }
func (everyReplica) NeedLeaderElection() bool          { return false }

func addProfiler(ctx context.Context, mgr manager.Manager, addr string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("profiler listener: %w", err)
	}
	mux := http.NewServeMux()
	profiling.Install(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	return mgr.Add(everyReplica(func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown) // a new context: ctx is done, the shutdown gets its own 5 s
		}()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}))
}
