// The manager of capwin's infrastructure provider (VCenter* kinds; HyperV* follow).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capwin/capwin/infrastructure/feature"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
)

func main() {
	common := manager.NewOptions()
	o := setup.Options{Sessions: &vcenter.Sessions{}}
	fs := pflag.CommandLine
	common.AddFlags(fs)
	o.ClusterCache.AddFlags(fs)
	fs.IntVar(&o.VCenterMachineConcurrency, "vcentermachine-concurrency", 10, "Number of VCenterMachines reconciled in parallel.")
	fs.IntVar(&o.VCenterClusterConcurrency, "vcentercluster-concurrency", 5, "Number of VCenterClusters reconciled in parallel.")
	fs.DurationVar(&o.PollInterval, "guest-poll-interval", 10*time.Second,
		"How often a machine waiting for its guest (addresses, bootstrap report, Node) is looked at.")
	fs.DurationVar(&o.TaskPollInterval, "task-poll-interval", time.Second,
		"First wait before a hypervisor task is read again; grows with the task's age up to 10x.")
	fs.DurationVar(&o.Sessions.KeepAlive, "vcenter-keepalive", 5*time.Minute, "Interval of the keep-alive call on idle vCenter sessions.")
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
	defer o.Sessions.Close(context.Background()) // ctx is cancelled by then
	ctrl.Log.WithName("setup").Info("Starting manager")
	return mgr.Start(ctx)
}
