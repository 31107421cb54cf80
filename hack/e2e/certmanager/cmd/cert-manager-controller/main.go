/*
Copyright The capwin Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command cert-manager-controller runs cert-manager's control loops (issuers,
// certificates, certificate requests, ACME, shims ...) from the root module's
// pkg/controller registry. This file holds the configuration and flags;
// run.go starts the servers, leader election and the controllers.
package main

import (
	"strings"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"

	config "github.com/cert-manager/cert-manager/internal/apis/config/controller"
	configscheme "github.com/cert-manager/cert-manager/internal/apis/config/controller/scheme"
	defaults "github.com/cert-manager/cert-manager/internal/apis/config/controller/v1alpha1"
	"github.com/cert-manager/cert-manager/internal/apis/config/controller/validation"
	configv1alpha1 "github.com/cert-manager/cert-manager/pkg/apis/config/controller/v1alpha1"
	"github.com/cert-manager/cert-manager/pkg/controller/configfile"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"

	"github.com/cert-manager/cert-manager/cmd/capwin-e2e/internal/cli"
)

func main() {
	cli.Main(cli.Component[config.ControllerConfiguration]{
		Name:        "controller",
		Description: "cert-manager controller: issues and renews certificates for Certificate and CertificateRequest resources.",
		Defaults:    defaultConfiguration,
		BindFlags:   bindFlags,
		LoadFile: func(path string) (*config.ControllerConfiguration, error) {
			f := configfile.New()
			if err := cli.LoadConfigFile(path, f); err != nil {
				return nil, err
			}
			return f.Config, nil
		},
		FeatureGates: func(c *config.ControllerConfiguration) map[string]bool { return c.FeatureGates },
		Logging:      func(c *config.ControllerConfiguration) *logsapi.LoggingConfiguration { return &c.Logging },
		Validate: func(c *config.ControllerConfiguration) error {
			return validation.ValidateControllerConfiguration(c, nil).ToAggregate()
		},
		Run: run,
	})
}

func defaultConfiguration() (*config.ControllerConfiguration, error) {
	scheme, _, err := configscheme.NewSchemeAndCodecs()
	if err != nil {
		return nil, err
	}
	versioned := &configv1alpha1.ControllerConfiguration{}
	scheme.Default(versioned)
	out := &config.ControllerConfiguration{}
	if err := scheme.Convert(versioned, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// bindFlags registers the controller's command-line flags. The names match
// upstream cert-manager v1.21 so that the Helm chart's args (and extraArgs)
// work unchanged.
func bindFlags(fs *pflag.FlagSet, c *config.ControllerConfiguration) {
	// API server connection.
	fs.StringVar(&c.KubeConfig, "kubeconfig", c.KubeConfig, "Path to a kubeconfig; in-cluster configuration is used when empty.")
	//nolint:staticcheck // kept for flag compatibility
	fs.StringVar(&c.APIServerHost, "master", c.APIServerHost, "API server address, overriding the kubeconfig/in-cluster one.")
	fs.Float32Var(&c.KubernetesAPIQPS, "kube-api-qps", c.KubernetesAPIQPS, "Client-side QPS limit towards the API server (when API Priority and Fairness is off).")
	fs.IntVar(&c.KubernetesAPIBurst, "kube-api-burst", c.KubernetesAPIBurst, "Client-side burst limit towards the API server.")

	// Scope and leader election.
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "Only manage resources in this namespace (disables cluster-scoped controllers). All namespaces when empty.")
	fs.StringVar(&c.ClusterResourceNamespace, "cluster-resource-namespace", c.ClusterResourceNamespace, "Namespace holding the Secrets referenced by ClusterIssuers.")
	cli.AddLeaderElectionFlags(fs, &c.LeaderElectionConfig.LeaderElectionConfig)
	fs.StringSliceVar(&c.Controllers, "controllers", c.Controllers, "Controllers to run: '*' = all default ones, 'name' adds one, '-name' removes one. Known: "+strings.Join(defaults.AllControllers, ", "))
	fs.IntVar(&c.NumberOfConcurrentWorkers, "concurrent-workers", c.NumberOfConcurrentWorkers, "Workers per controller.")
	fs.IntVar(&c.MaxConcurrentChallenges, "max-concurrent-challenges", c.MaxConcurrentChallenges, "Maximum number of ACME challenges processed at once.")
	fs.Var(cliflag.NewMapStringBool(&c.FeatureGates), "feature-gates", "key=value pairs of feature gates. Known gates:\n"+strings.Join(utilfeature.DefaultFeatureGate.KnownFeatures(), "\n"))

	// Issuers and certificates.
	fs.BoolVar(&c.ClusterIssuerAmbientCredentials, "cluster-issuer-ambient-credentials", c.ClusterIssuerAmbientCredentials, "Let ClusterIssuers use ambient credentials (metadata services, environment).")
	fs.BoolVar(&c.IssuerAmbientCredentials, "issuer-ambient-credentials", c.IssuerAmbientCredentials, "Let namespaced Issuers use ambient credentials.")
	fs.BoolVar(&c.EnableCertificateOwnerRef, "enable-certificate-owner-ref", c.EnableCertificateOwnerRef, "Make each Certificate the owner of its Secret, so deleting the Certificate deletes the Secret.")
	fs.StringSliceVar(&c.CopiedAnnotationPrefixes, "copied-annotation-prefixes", c.CopiedAnnotationPrefixes, "Annotation key prefixes copied from Certificates to CertificateRequests/Orders; '-prefix' excludes.")
	fs.DurationVar(&c.CertificateRequestMinimumBackoffDuration, "certificate-request-minimum-backoff-duration", c.CertificateRequestMinimumBackoffDuration, "First back-off after a failed issuance.")
	fs.DurationVar(&c.CertificateRequestMaximumBackoffDuration, "certificate-request-maximum-backoff-duration", c.CertificateRequestMaximumBackoffDuration, "Largest back-off after repeated failed issuances.")
	fs.IntVar(&c.PEMSizeLimitsConfig.MaxCertificateSize, "max-certificate-size", c.PEMSizeLimitsConfig.MaxCertificateSize, "Largest accepted PEM certificate, in bytes.")
	fs.IntVar(&c.PEMSizeLimitsConfig.MaxPrivateKeySize, "max-private-key-size", c.PEMSizeLimitsConfig.MaxPrivateKeySize, "Largest accepted PEM private key, in bytes.")
	fs.IntVar(&c.PEMSizeLimitsConfig.MaxChainLength, "max-certificate-chain-length", c.PEMSizeLimitsConfig.MaxChainLength, "Largest accepted PEM chain, in bytes.")
	fs.IntVar(&c.PEMSizeLimitsConfig.MaxBundleSize, "max-certificate-bundle-size", c.PEMSizeLimitsConfig.MaxBundleSize, "Largest accepted PEM bundle, in bytes.")

	// ACME (accepted and passed on; not exercised by capwin's tests).
	fs.StringVar(&c.ACMEHTTP01Config.SolverImage, "acme-http01-solver-image", c.ACMEHTTP01Config.SolverImage, "Image of the ACME HTTP-01 solver pods.")
	fs.StringVar(&c.ACMEHTTP01Config.SolverResourceRequestCPU, "acme-http01-solver-resource-request-cpu", c.ACMEHTTP01Config.SolverResourceRequestCPU, "CPU request of HTTP-01 solver pods.")
	fs.StringVar(&c.ACMEHTTP01Config.SolverResourceRequestMemory, "acme-http01-solver-resource-request-memory", c.ACMEHTTP01Config.SolverResourceRequestMemory, "Memory request of HTTP-01 solver pods.")
	fs.StringVar(&c.ACMEHTTP01Config.SolverResourceLimitsCPU, "acme-http01-solver-resource-limits-cpu", c.ACMEHTTP01Config.SolverResourceLimitsCPU, "CPU limit of HTTP-01 solver pods.")
	fs.StringVar(&c.ACMEHTTP01Config.SolverResourceLimitsMemory, "acme-http01-solver-resource-limits-memory", c.ACMEHTTP01Config.SolverResourceLimitsMemory, "Memory limit of HTTP-01 solver pods.")
	fs.BoolVar(&c.ACMEHTTP01Config.SolverRunAsNonRoot, "acme-http01-solver-run-as-non-root", c.ACMEHTTP01Config.SolverRunAsNonRoot, "Run HTTP-01 solver pods as non-root.")
	fs.StringSliceVar(&c.ACMEHTTP01Config.SolverNameservers, "acme-http01-solver-nameservers", c.ACMEHTTP01Config.SolverNameservers, "host:port DNS servers for HTTP-01 self checks.")
	fs.Var(cliflag.NewMapStringString(&c.ACMEHTTP01Config.SolverExtraLabels), "acme-http01-solver-extra-labels", "key=value labels added to HTTP-01 solver resources.")
	fs.StringVar(&c.ACMEHTTP01Config.SolverRuntimeClassName, "acme-http01-solver-runtime-class-name", c.ACMEHTTP01Config.SolverRuntimeClassName, "RuntimeClass of HTTP-01 solver pods.")
	fs.StringSliceVar(&c.ACMEDNS01Config.RecursiveNameservers, "dns01-recursive-nameservers", c.ACMEDNS01Config.RecursiveNameservers, "ip:port or https:// DoH resolvers for DNS-01 self checks.")
	fs.BoolVar(&c.ACMEDNS01Config.RecursiveNameserversOnly, "dns01-recursive-nameservers-only", c.ACMEDNS01Config.RecursiveNameserversOnly, "Only query --dns01-recursive-nameservers, never authoritative servers.")
	fs.DurationVar(&c.ACMEDNS01Config.CheckRetryPeriod, "dns01-check-retry-period", c.ACMEDNS01Config.CheckRetryPeriod, "Wait between ACME propagation checks.")

	// Ingress / Gateway API shims.
	fs.StringSliceVar(&c.IngressShimConfig.DefaultAutoCertificateAnnotations, "auto-certificate-annotations", c.IngressShimConfig.DefaultAutoCertificateAnnotations, "Ingress annotations that request a certificate.")
	fs.StringSliceVar(&c.IngressShimConfig.ExtraCertificateAnnotations, "extra-certificate-annotations", c.IngressShimConfig.ExtraCertificateAnnotations, "Annotations copied from Ingresses to the Certificates the shim creates.")
	fs.StringVar(&c.IngressShimConfig.DefaultIssuerName, "default-issuer-name", c.IngressShimConfig.DefaultIssuerName, "Issuer used by the shims when none is named.")
	fs.StringVar(&c.IngressShimConfig.DefaultIssuerKind, "default-issuer-kind", c.IngressShimConfig.DefaultIssuerKind, "Kind of --default-issuer-name.")
	fs.StringVar(&c.IngressShimConfig.DefaultIssuerGroup, "default-issuer-group", c.IngressShimConfig.DefaultIssuerGroup, "API group of --default-issuer-name.")
	fs.BoolVar(&c.GatewayAPIConfig.Enabled, "enable-gateway-api", c.GatewayAPIConfig.Enabled, "Enable the Gateway API shim and HTTP-01 solver.")
	fs.BoolVar(&c.GatewayAPIConfig.EnableListenerSet, "enable-gateway-api-listenerset", c.GatewayAPIConfig.EnableListenerSet, "Enable the Gateway API ListenerSet shim.")
	fs.StringSliceVar(&c.GatewayAPIConfig.ExtraProtocols, "gateway-api-extra-protocols", c.GatewayAPIConfig.ExtraProtocols, "Extra Gateway listener protocols treated as TLS.")

	// Servers.
	fs.StringVar(&c.MetricsListenAddress, "metrics-listen-address", c.MetricsListenAddress, "Listen address of the Prometheus metrics endpoint.")
	cli.AddMetricsTLSFlags(fs, &c.MetricsTLSConfig)
	fs.BoolVar(&c.EnablePprof, "enable-profiling", c.EnablePprof, "Serve Go pprof on --profiler-address.")
	fs.StringVar(&c.PprofAddress, "profiler-address", c.PprofAddress, "Listen address of the profiler.")
	fs.StringVar(&c.HealthzListenAddress, "internal-healthz-listen-address", c.HealthzListenAddress, "Listen address of the /livez endpoint used by the liveness probe.")
	fs.DurationVar(&c.LeaderElectionConfig.HealthzTimeout, "internal-healthz-leader-election-timeout", c.LeaderElectionConfig.HealthzTimeout, "Grace period after a missed lease renewal before /livez reports failure.")
	_ = fs.MarkHidden("internal-healthz-listen-address")
	_ = fs.MarkHidden("internal-healthz-leader-election-timeout")

	logf.AddFlags(&c.Logging, fs)
}
