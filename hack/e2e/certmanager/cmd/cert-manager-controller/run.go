/*
Copyright The capwin Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	config "github.com/cert-manager/cert-manager/internal/apis/config/controller"
	defaults "github.com/cert-manager/cert-manager/internal/apis/config/controller/v1alpha1"
	"github.com/cert-manager/cert-manager/internal/controller/feature"
	"github.com/cert-manager/cert-manager/internal/pem"
	"github.com/cert-manager/cert-manager/pkg/controller"
	shimgateways "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/gateways"
	shimlistenersets "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/listenerset"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/healthz"
	dnsutil "github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/util"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/server"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"
	"github.com/cert-manager/cert-manager/pkg/util/profiling"

	// Issuer implementations used by the (cluster)issuers controllers. The
	// controllers themselves register through the defaults package import.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/vault"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/venafi"

	"github.com/cert-manager/cert-manager/cmd/capwin-e2e/internal/cli"
)

const (
	// leaseName must match the resourceNames of the chart's
	// cert-manager:leaderelection Role.
	leaseName = "cert-manager-controller"
	managedBy = "cert-manager"
)

func run(ctx context.Context, c *config.ControllerConfiguration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	log := logf.FromContext(ctx)
	g, ctx := errgroup.WithContext(ctx)

	factory, err := newContextFactory(ctx, c)
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}

	limits := c.PEMSizeLimitsConfig
	pem.SetGlobalSizeLimits(pem.NewSizeLimitsFromConfig(limits.MaxCertificateSize, limits.MaxPrivateKeySize, limits.MaxChainLength, limits.MaxBundleSize))

	enabled := enabledControllers(c)
	log.Info("enabled controllers", "controllers", sets.List(enabled))

	// Prometheus metrics, optionally over TLS.
	metricsCerts := cli.CertificateSource(log, c.MetricsTLSConfig, base.RESTConfig, managedBy)
	if metricsCerts != nil {
		g.Go(func() error {
			if err := metricsCerts.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		})
	}
	metricsLn, err := server.Listen(ctx, "tcp", c.MetricsListenAddress,
		server.WithCertificateSource(metricsCerts),
		server.WithTLSCipherSuites(c.MetricsTLSConfig.CipherSuites),
		server.WithTLSMinVersion(c.MetricsTLSConfig.MinTLSVersion))
	if err != nil {
		return fmt.Errorf("metrics listener on %s: %w", c.MetricsListenAddress, err)
	}
	base.Metrics.SetupACMECollector(base.SharedInformerFactory.Acme().V1().Challenges().Lister())
	base.Metrics.SetupCertificateCollector(base.SharedInformerFactory.Certmanager().V1().Certificates().Lister())
	base.Metrics.SetupIssuerCollector(base.SharedInformerFactory.Certmanager().V1().Issuers().Lister())
	if enabled.Has(clusterissuers.ControllerName) {
		base.Metrics.SetupClusterIssuerCollector(base.SharedInformerFactory.Certmanager().V1().ClusterIssuers().Lister())
	}
	serve(ctx, g, "metrics", base.Metrics.NewServer(metricsLn), metricsLn)

	if c.EnablePprof {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", c.PprofAddress)
		if err != nil {
			return fmt.Errorf("profiler listener on %s: %w", c.PprofAddress, err)
		}
		mux := http.NewServeMux()
		profiling.Install(mux)
		serve(ctx, g, "profiler", &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}, ln)
	}

	// /livez for the liveness probe; it also fails when leader election stalls.
	var lc net.ListenConfig
	healthzLn, err := lc.Listen(ctx, "tcp", c.HealthzListenAddress)
	if err != nil {
		return fmt.Errorf("healthz listener on %s: %w", c.HealthzListenAddress, err)
	}
	healthzServer := healthz.NewServer(c.LeaderElectionConfig.HealthzTimeout)
	g.Go(func() error {
		log.V(logf.InfoLevel).Info("serving /livez", "address", healthzLn.Addr().String())
		return healthzServer.Start(ctx, healthzLn)
	})

	elected := make(chan struct{})
	if c.LeaderElectionConfig.Enabled {
		g.Go(func() error {
			return leaderElect(ctx, c, factory, healthzServer.LeaderHealthzAdaptor, elected)
		})
	} else {
		close(elected)
	}
	select {
	case <-ctx.Done():
		return g.Wait()
	case <-elected:
	}

	for name, construct := range controller.Known() {
		if !enabled.Has(name) {
			continue
		}
		ctrl, err := construct(factory)
		if err != nil {
			cancel()
			return errors.Join(fmt.Errorf("starting controller %s: %w", name, err), g.Wait())
		}
		g.Go(func() error {
			log.V(logf.InfoLevel).Info("starting controller", "controller", name)
			return ctrl.Run(c.NumberOfConcurrentWorkers, ctx)
		})
	}

	gatewayAPI := utilfeature.DefaultFeatureGate.Enabled(feature.ExperimentalGatewayAPISupport) && c.GatewayAPIConfig.Enabled
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	if gatewayAPI {
		base.GWShared.Start(ctx.Done())
	}

	err = g.Wait()
	if gatewayAPI {
		base.GWShared.Shutdown()
	}
	base.HTTP01ResourceMetadataInformersFactory.Shutdown()
	base.KubeSharedInformerFactory.Shutdown()
	base.SharedInformerFactory.Shutdown()
	if err != nil {
		return fmt.Errorf("controller stopped: %w", err)
	}
	log.V(logf.InfoLevel).Info("controllers stopped")
	return nil
}

// serve runs srv on ln inside g and shuts it down gracefully with ctx.
func serve(ctx context.Context, g *errgroup.Group, name string, srv *http.Server, ln net.Listener) {
	g.Go(func() error {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown) // a new context: ctx is done, the shutdown gets its own 5 s
	})
	g.Go(func() error {
		logf.FromContext(ctx).V(logf.InfoLevel).Info("serving "+name, "address", ln.Addr().String())
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
}

// leaderElect blocks until ctx ends or leadership is lost (an error: the
// process must restart rather than keep running controllers unled).
// elected is closed once this replica holds the Lease.
func leaderElect(ctx context.Context, c *config.ControllerConfiguration, factory *controller.ContextFactory, watchdog *leaderelection.HealthzAdaptor, elected chan struct{}) error {
	leCtx, err := factory.Build("leader-election")
	if err != nil {
		return err
	}
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("hostname for the leader election identity: %w", err)
	}
	le := c.LeaderElectionConfig
	lock, err := resourcelock.NewWithLabels(resourcelock.LeasesResourceLock, le.Namespace, leaseName,
		leCtx.Client.CoreV1(), leCtx.Client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: host + "-external-cert-manager-controller", EventRecorder: leCtx.Recorder},
		map[string]string{"app.kubernetes.io/managed-by": managedBy})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(elected) },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return err
	}
	logf.FromContext(ctx).V(logf.InfoLevel).Info("waiting for the leader lease", "namespace", le.Namespace, "name", leaseName)
	elector.Run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("leader election lost")
}

// enabledControllers resolves --controllers: "*" stands for the default set,
// "-name" removes a controller (and alone implies "*"), anything else adds
// one. Feature gates and the namespace scope then adjust the result.
func enabledControllers(c *config.ControllerConfiguration) sets.Set[string] {
	enabled, disabled := sets.New[string](), sets.New[string]()
	for _, name := range c.Controllers {
		switch {
		case name == "*":
			enabled.Insert(defaults.DefaultEnabledControllers...)
		case strings.HasPrefix(name, "-"):
			disabled.Insert(strings.TrimPrefix(name, "-"))
		default:
			enabled.Insert(name)
		}
	}
	if enabled.Len() == 0 && disabled.Len() > 0 {
		enabled.Insert(defaults.DefaultEnabledControllers...)
	}

	gates := utilfeature.DefaultFeatureGate
	if gates.Enabled(feature.ExperimentalCertificateSigningRequestControllers) {
		enabled.Insert(defaults.ExperimentalCertificateSigningRequestControllers...)
	}
	if gates.Enabled(feature.ExperimentalGatewayAPISupport) && c.GatewayAPIConfig.Enabled {
		enabled.Insert(shimgateways.ControllerName)
	}
	if gates.Enabled(feature.ListenerSets) && c.GatewayAPIConfig.Enabled && c.GatewayAPIConfig.EnableListenerSet {
		enabled.Insert(shimlistenersets.ControllerName)
	}
	if c.Namespace != "" {
		enabled.Delete(defaults.ClusterScopedControllers...)
	}
	return enabled.Difference(disabled)
}

func newContextFactory(ctx context.Context, c *config.ControllerConfiguration) (*controller.ContextFactory, error) {
	quantity := func(flag, v string) (resource.Quantity, error) {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return q, fmt.Errorf("invalid %s %q: %w", flag, v, err)
		}
		return q, nil
	}
	h := c.ACMEHTTP01Config
	reqCPU, err := quantity("acme-http01-solver-resource-request-cpu", h.SolverResourceRequestCPU)
	if err != nil {
		return nil, err
	}
	reqMem, err := quantity("acme-http01-solver-resource-request-memory", h.SolverResourceRequestMemory)
	if err != nil {
		return nil, err
	}
	limCPU, err := quantity("acme-http01-solver-resource-limits-cpu", h.SolverResourceLimitsCPU)
	if err != nil {
		return nil, err
	}
	limMem, err := quantity("acme-http01-solver-resource-limits-memory", h.SolverResourceLimitsMemory)
	if err != nil {
		return nil, err
	}
	nameservers := c.ACMEDNS01Config.RecursiveNameservers
	if len(nameservers) == 0 {
		nameservers = dnsutil.RecursiveNameservers
	}

	return controller.NewContextFactory(ctx, controller.ContextOptions{
		//nolint:staticcheck // the --master flag is still supported
		APIServerHost:      c.APIServerHost,
		Kubeconfig:         c.KubeConfig,
		KubernetesAPIQPS:   c.KubernetesAPIQPS,
		KubernetesAPIBurst: c.KubernetesAPIBurst,
		Namespace:          c.Namespace,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace:        c.ClusterResourceNamespace,
			ClusterIssuerAmbientCredentials: c.ClusterIssuerAmbientCredentials,
			IssuerAmbientCredentials:        c.IssuerAmbientCredentials,
		},
		ACMEOptions: controller.ACMEOptions{
			HTTP01SolverImage:                 h.SolverImage,
			HTTP01SolverResourceRequestCPU:    reqCPU,
			HTTP01SolverResourceRequestMemory: reqMem,
			HTTP01SolverResourceLimitsCPU:     limCPU,
			HTTP01SolverResourceLimitsMemory:  limMem,
			ACMEHTTP01SolverRunAsNonRoot:      h.SolverRunAsNonRoot,
			HTTP01SolverRuntimeClassName:      h.SolverRuntimeClassName,
			HTTP01SolverNameservers:           h.SolverNameservers,
			HTTP01SolverExtraLabels:           h.SolverExtraLabels,
			DNS01Nameservers:                  nameservers,
			DNS01CheckAuthoritative:           !c.ACMEDNS01Config.RecursiveNameserversOnly,
			DNS01CheckRetryPeriod:             c.ACMEDNS01Config.CheckRetryPeriod,
		},
		IngressShimOptions: controller.IngressShimOptions{
			DefaultIssuerName:                 c.IngressShimConfig.DefaultIssuerName,
			DefaultIssuerKind:                 c.IngressShimConfig.DefaultIssuerKind,
			DefaultIssuerGroup:                c.IngressShimConfig.DefaultIssuerGroup,
			DefaultAutoCertificateAnnotations: c.IngressShimConfig.DefaultAutoCertificateAnnotations,
			ExtraCertificateAnnotations:       c.IngressShimConfig.ExtraCertificateAnnotations,
			GatewayAPIExtraProtocols:          sets.New(c.GatewayAPIConfig.ExtraProtocols...),
		},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:                           c.EnableCertificateOwnerRef,
			CopiedAnnotationPrefixes:                 c.CopiedAnnotationPrefixes,
			CertificateRequestMinimumBackoffDuration: c.CertificateRequestMinimumBackoffDuration,
			CertificateRequestMaximumBackoffDuration: c.CertificateRequestMaximumBackoffDuration,
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: c.MaxConcurrentChallenges},
		ConfigOptions: controller.ConfigOptions{
			EnableGatewayAPI:            c.GatewayAPIConfig.Enabled,
			EnableGatewayAPIListenerSet: c.GatewayAPIConfig.EnableListenerSet,
		},
	})
}
