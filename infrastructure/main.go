// The manager of capwin's infrastructure provider (VCenter* and HyperV* kinds).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
)

func main() {
	o := setup.Options{Sessions: &session.Sessions{}, Conns: &hyperv.Conns{}}
	manager.Main(setup.ControllerName, setup.Scheme(), func(fs *pflag.FlagSet) {
		o.ClusterCache.AddFlags(fs)
		fs.IntVar(&o.VCenterMachineConcurrency, "vcentermachine-concurrency", 10, "Number of VCenterMachines reconciled in parallel.")
		fs.IntVar(&o.VCenterClusterConcurrency, "vcentercluster-concurrency", 5, "Number of VCenterClusters reconciled in parallel.")
		fs.IntVar(&o.HyperVMachineConcurrency, "hypervmachine-concurrency", 10, "Number of HyperVMachines reconciled in parallel.")
		fs.IntVar(&o.HyperVClusterConcurrency, "hypervcluster-concurrency", 5, "Number of HyperVClusters reconciled in parallel.")
		fs.DurationVar(&o.PollInterval, "guest-poll-interval", 10*time.Second,
			"First wait before a machine waiting for its guest (addresses, bootstrap report, Node) is looked at again; grows with the time waited, up to 1m with the vCenter watch or the Hyper-V guest watch and 30s without.")
		fs.DurationVar(&o.TaskPollInterval, "task-poll-interval", time.Second,
			"First wait before a hypervisor task is read again; grows with the task's age up to 10x.")
		fs.DurationVar(&o.HostRecheck, "hyperv-host-recheck", time.Minute, "How often every Hyper-V host is probed (availability and free memory for placement).")
		fs.DurationVar(&o.Conns.GuestWatch, "hyperv-guest-watch-interval", hyperv.DefaultGuestWatch,
			"How often one operation per Hyper-V host reads the guest state (addresses, bootstrap reports) of all its machines that wait for their guest, waking those whose VM changed; their own reads then back off to 1m. 0: off, each machine reads its VM, backing off to 30s.")
		fs.DurationVar(&o.Conns.Timeout, "winrm-timeout", 30*time.Second, "Longest wait for one WinRM request to a Hyper-V host.")
		fs.DurationVar(&o.Conns.Deadlines.Short, "winrm-operation-timeout", 30*time.Second,
			"Longest wait for one Hyper-V host operation (find, power, job, eject, host probe), including the wait for the host's turn.")
		fs.DurationVar(&o.Conns.Deadlines.Long, "winrm-long-operation-timeout", 2*time.Minute,
			"Longest wait for one long Hyper-V host operation (create with its disk and config drive, remove, copy into the guest).")
		fs.StringVar(&o.IdentityNamespace, "identity-namespace", identityNamespace(),
			"Namespace of the Secrets of VCenterClusterIdentities and HyperVClusterIdentities: the manager's own (default: $POD_NAMESPACE).")
		fs.BoolVar(&o.NoVCenterWatch, "no-vcenter-watch", false,
			"Do not follow capwin's vCenter tasks and VMs with a property collector: VCenterMachines then move on at the polls alone.")
		fs.DurationVar(&o.VCenterDeleteTaskWait, "vcenter-delete-task-wait", setup.DefaultVCenterDeleteTaskWait,
			"How long a VCenterMachine's delete waits, in one reconcile, for its power-off and destroy tasks before it leaves them to the next reconcile. 0: no wait.")
		fs.DurationVar(&o.Sessions.KeepAlive, "vcenter-keepalive", 5*time.Minute, "Interval of the keep-alive call on idle vCenter sessions.")
		fs.IntVar(&o.Sessions.MaxTasks, "vcenter-max-tasks", session.DefaultMaxTasks,
			"Most tasks (clone, reconfigure, power, destroy) this manager runs at once on one vCenter server, across all clusters; a machine whose task finds none free waits (WaitingForTaskSlot). 0: no limit.")
	}, func(ctx context.Context, mgr ctrl.Manager, common *manager.Options) error {
		o.WatchFilterValue, o.Namespace = common.WatchFilterValue, common.Namespace
		if o.Conns.GuestWatch == 0 {
			o.Conns.GuestWatch = -1 // the flag's 0: off (the Options' zero is the default)
		}
		if o.VCenterDeleteTaskWait == 0 {
			o.VCenterDeleteTaskWait = -1 // the flag's 0: no wait (the Options' zero is the default)
		}
		if err := setup.Webhooks(mgr); err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
		// Log out of vCenter when the manager stops, within 10 seconds.
		go func() {
			<-ctx.Done()
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			o.Sessions.Close(stop)
		}()
		return setup.Reconcilers(ctx, mgr, o)
	})
}

// identityNamespace is the namespace the manager runs in (the Deployment passes it through the
// Downward API), else the release's.
func identityNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "capwin-infrastructure-system"
}
