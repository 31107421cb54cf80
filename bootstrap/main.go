// The bootstrap manager of capwin's "windows" bootstrap provider.
package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/internal/manager"
)

func main() {
	o := setup.Options{}
	manager.Main(setup.ControllerName, setup.Scheme(), func(fs *pflag.FlagSet) {
		o.ClusterCache.AddFlags(fs)
		fs.DurationVar(&o.TokenTTL, "bootstrap-token-ttl", windowsconfig.DefaultTokenTTL,
			"Lifetime of a bootstrap token; extended while the Machine has no Node, up to --bootstrap-join-timeout.")
		fs.DurationVar(&o.JoinTimeout, "bootstrap-join-timeout", windowsconfig.DefaultJoinTimeout,
			"How long a Machine may take to get a Node after its first bootstrap token was issued; then the token is revoked unused and the WindowsConfig says BootstrapTokenExpired. Keep it longer than the MachineHealthCheck nodeStartupTimeout.")
		fs.DurationVar(&o.AccountCleanupTimeout, "computer-account-cleanup-timeout", windowsconfig.DefaultAccountCleanupTimeout,
			"How long a Machine's deletion retries deleting its Active Directory computer account (or taking it out of groups) before it goes on with a Warning event (ComputerAccountNotDeleted).")
		fs.IntVar(&o.WindowsConfigConcurrency, "windowsconfig-concurrency", 10, "Number of WindowsConfigs reconciled in parallel.")
	}, func(ctx context.Context, mgr ctrl.Manager, common *manager.Options) error {
		o.WatchFilterValue = common.WatchFilterValue
		if err := setup.Webhooks(mgr); err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
		return setup.Reconcilers(ctx, mgr, o)
	})
}
