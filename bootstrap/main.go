// The bootstrap manager of capwin's "windows" bootstrap provider.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capwin/capwin/bootstrap/feature"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/internal/manager"
)

func main() {
	common := manager.NewOptions()
	o := setup.Options{}
	fs := pflag.CommandLine
	common.AddFlags(fs)
	o.ClusterCache.AddFlags(fs)
	fs.DurationVar(&o.TokenTTL, "bootstrap-token-ttl", windowsconfig.DefaultTokenTTL,
		"Lifetime of a bootstrap token; extended while the Machine has no Node.")
	fs.IntVar(&o.WindowsConfigConcurrency, "windowsconfig-concurrency", 10, "Number of WindowsConfigs reconciled in parallel.")
	feature.MutableGates.AddFlag(fs)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()
	o.WatchFilterValue = common.WatchFilterValue
	if err := run(common, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(common *manager.Options, o setup.Options) error {
	mgr, err := manager.New(common, setup.Scheme(), setup.ControllerName, feature.Gates.Enabled(feature.PriorityQueue))
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if err := setup.Webhooks(mgr); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	if err := setup.Reconcilers(ctx, mgr, o); err != nil {
		return fmt.Errorf("reconcilers: %w", err)
	}
	ctrl.Log.WithName("setup").Info("Starting manager")
	return mgr.Start(ctx)
}
