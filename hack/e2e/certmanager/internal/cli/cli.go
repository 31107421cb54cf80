/*
Copyright The capwin Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package cli holds what the three cert-manager mains of this module share:
// flag parsing with an optional --config file, feature gates, logging set-up,
// exit-code handling and the construction of TLS certificate sources.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/cert-manager/cert-manager/internal/apis/config/shared"
	cmdutil "github.com/cert-manager/cert-manager/internal/cmd/util"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/server/tls"
	"github.com/cert-manager/cert-manager/pkg/server/tls/authority"
	"github.com/cert-manager/cert-manager/pkg/util"
	"github.com/cert-manager/cert-manager/pkg/util/configfile"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"
)

// Component describes one binary. T is the internal configuration type of
// the component (for example config.ControllerConfiguration).
type Component[T any] struct {
	// Name is used for logging and the usage text.
	Name string
	// Description is printed at the top of --help.
	Description string
	// Defaults returns the configuration with all upstream defaults applied.
	Defaults func() (*T, error)
	// BindFlags registers every command-line flag, writing into cfg.
	BindFlags func(fs *pflag.FlagSet, cfg *T)
	// LoadFile decodes (and defaults) a configuration file.
	LoadFile func(path string) (*T, error)
	// FeatureGates and Logging return the parts of cfg the framework applies.
	FeatureGates func(cfg *T) map[string]bool
	Logging      func(cfg *T) *logsapi.LoggingConfiguration
	// Validate checks the final configuration.
	Validate func(cfg *T) error
	// Run runs the component until ctx is cancelled.
	Run func(ctx context.Context, cfg *T) error
}

// Main parses os.Args, runs the component and exits the process with a
// non-zero code when the component fails.
func Main[T any](c Component[T]) {
	ctx, exit := cmdutil.SetupExitHandler(context.Background(), cmdutil.GracefulShutdown)
	defer exit() // may call os.Exit, so it must run last

	logf.InitLogs()
	defer logf.FlushLogs()
	ctx = logf.NewContext(ctx, logf.Log, c.Name)

	cfg, err := c.Parse(os.Args[1:])
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err == nil {
		info := util.VersionInfo()
		logf.FromContext(ctx).Info("starting cert-manager "+c.Name+" (capwin e2e build)",
			"version", info.GitVersion, "git_commit", info.GitCommit, "go_version", info.GoVersion, "platform", info.Platform)
		err = c.Run(ctx, cfg)
	}
	if err != nil {
		logf.Log.Error(err, "cert-manager "+c.Name+" failed")
		cmdutil.SetExitCode(err)
	}
}

func (c Component[T]) newFlagSet(cfg *T, configPath *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.Name, pflag.ContinueOnError)
	fs.SortFlags = true
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "%s\n\nUsage: %s [flags]\n\nFlags:\n%s", c.Description, filepath.Base(os.Args[0]), fs.FlagUsages())
	}
	fs.StringVar(configPath, "config", *configPath, "Path to a configuration file (the component's v1alpha1 configuration kind). Flags given on the command line override its values.")
	c.BindFlags(fs, cfg)
	return fs
}

// Parse turns command-line arguments into a validated configuration. When
// --config is given, the file is loaded on top of the defaults and the
// command line is parsed a second time into a fresh flag set so that
// explicitly given flags win over the file (list flags replace, not append).
func (c Component[T]) Parse(args []string) (*T, error) {
	cfg, err := c.Defaults()
	if err != nil {
		return nil, fmt.Errorf("computing default configuration: %w", err)
	}
	var configPath string
	fs := c.newFlagSet(cfg, &configPath)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected positional arguments: %v", fs.Args())
	}
	if err := setFeatureGates(c.FeatureGates(cfg)); err != nil {
		return nil, err
	}

	if configPath != "" {
		abs, err := filepath.Abs(configPath)
		if err != nil {
			return nil, err
		}
		if cfg, err = c.LoadFile(abs); err != nil {
			return nil, fmt.Errorf("loading config file %s: %w", configPath, err)
		}
		if err := c.newFlagSet(cfg, &configPath).Parse(args); err != nil {
			return nil, err
		}
		if err := setFeatureGates(c.FeatureGates(cfg)); err != nil {
			return nil, err
		}
	}

	if err := c.Validate(cfg); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	if err := logf.ValidateAndApply(c.Logging(cfg)); err != nil {
		return nil, fmt.Errorf("invalid logging configuration: %w", err)
	}
	return cfg, nil
}

func setFeatureGates(gates map[string]bool) error {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return fmt.Errorf("setting feature gates: %w", err)
	}
	return nil
}

// LoadConfigFile reads path with cert-manager's file loader into file, which
// is one of the pkg/*/configfile types.
func LoadConfigFile(path string, file configfile.ConfigFile) error {
	loader, err := configfile.NewConfigurationFSLoader(nil, path)
	if err != nil {
		return err
	}
	return loader.Load(file)
}

// CertificateSource returns where a TLS server gets its serving certificate
// from: files on disk, a CA kept in a Secret (dynamic serving) or nowhere
// (nil, the server then serves plain HTTP or refuses to start).
func CertificateSource(log logr.Logger, cfg shared.TLSConfig, restConfig *rest.Config, managedBy string) tls.CertificateSource {
	if cfg.FilesystemConfigProvided() {
		log.V(logf.InfoLevel).Info("serving certificate read from disk", "cert", cfg.Filesystem.CertFile, "key", cfg.Filesystem.KeyFile)
		return &tls.FileCertificateSource{CertPath: cfg.Filesystem.CertFile, KeyPath: cfg.Filesystem.KeyFile}
	}
	if cfg.DynamicConfigProvided() {
		log.V(logf.InfoLevel).Info("serving certificate signed by a CA kept in a Secret",
			"secret_namespace", cfg.Dynamic.SecretNamespace, "secret_name", cfg.Dynamic.SecretName, "dns_names", cfg.Dynamic.DNSNames)
		return &tls.DynamicSource{
			DNSNames: cfg.Dynamic.DNSNames,
			Authority: &authority.DynamicAuthority{
				SecretNamespace: cfg.Dynamic.SecretNamespace,
				SecretName:      cfg.Dynamic.SecretName,
				SecretLabels:    map[string]string{"app.kubernetes.io/managed-by": managedBy},
				LeafDuration:    cfg.Dynamic.LeafDuration,
				RESTConfig:      restConfig,
			},
		}
	}
	return nil
}

// AddMetricsTLSFlags registers the flags that configure TLS on a metrics
// endpoint; the controller and the cainjector use the same names.
func AddMetricsTLSFlags(fs *pflag.FlagSet, c *shared.TLSConfig) {
	fs.StringVar(&c.Filesystem.CertFile, "metrics-tls-cert-file", c.Filesystem.CertFile, "Serve metrics over TLS with the certificate in this file.")
	fs.StringVar(&c.Filesystem.KeyFile, "metrics-tls-private-key-file", c.Filesystem.KeyFile, "Private key file for --metrics-tls-cert-file.")
	fs.DurationVar(&c.Dynamic.LeafDuration, "metrics-dynamic-serving-leaf-duration", c.Dynamic.LeafDuration, "Lifetime of dynamically generated metrics serving certificates.")
	fs.StringVar(&c.Dynamic.SecretNamespace, "metrics-dynamic-serving-ca-secret-namespace", c.Dynamic.SecretNamespace, "Namespace of the Secret holding the CA for dynamic metrics serving certificates.")
	fs.StringVar(&c.Dynamic.SecretName, "metrics-dynamic-serving-ca-secret-name", c.Dynamic.SecretName, "Name of the Secret holding the CA for dynamic metrics serving certificates.")
	fs.StringSliceVar(&c.Dynamic.DNSNames, "metrics-dynamic-serving-dns-names", c.Dynamic.DNSNames, "DNS names for dynamic metrics serving certificates.")
	fs.StringSliceVar(&c.CipherSuites, "metrics-tls-cipher-suites", c.CipherSuites, "Cipher suites for the metrics TLS server (default: Go's).")
	fs.StringVar(&c.MinTLSVersion, "metrics-tls-min-version", c.MinTLSVersion, "Minimum TLS version for the metrics server (default: Go's).")
}

// AddLeaderElectionFlags registers the leader election flags shared by the
// controller and the cainjector.
func AddLeaderElectionFlags(fs *pflag.FlagSet, c *shared.LeaderElectionConfig) {
	fs.BoolVar(&c.Enabled, "leader-elect", c.Enabled, "Elect a leader (a Lease) so that only one replica is active.")
	fs.StringVar(&c.Namespace, "leader-election-namespace", c.Namespace, "Namespace of the leader election Lease.")
	fs.DurationVar(&c.LeaseDuration, "leader-election-lease-duration", c.LeaseDuration, "How long a non-leader waits after the last renewal before trying to take over.")
	fs.DurationVar(&c.RenewDeadline, "leader-election-renew-deadline", c.RenewDeadline, "How long the leader keeps retrying to renew before giving up leadership.")
	fs.DurationVar(&c.RetryPeriod, "leader-election-retry-period", c.RetryPeriod, "Interval between acquire/renew attempts.")
}
