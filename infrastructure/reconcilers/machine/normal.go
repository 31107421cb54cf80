package machine

import (
	"context"
	"errors"
	"fmt"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/controllers/clustercache"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/internal/guestos"
)

// Markers stored in status.task while no hypervisor task reference exists yet.
const (
	// intentCreate is written before a create is sent, so a manager stopped between the call and
	// the status write knows a VM may be on its way and does not create a second one.
	intentCreate = "intent:create"
	// intentShutdown records that the guest was asked to shut down.
	intentShutdown = "intent:shutdown"
)

func (r *Reconciler) reconcileNormal(ctx context.Context, s *hypervisor.Scope, persist func() error) (ctrl.Result, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if st.Provisioning.State == "" {
		r.setState(obj, infrav1.StatePending)
	}
	if s.InfraCluster == nil || !ptr.Deref(s.Cluster.Status.Initialization.InfrastructureProvisioned, false) {
		waiting(obj, infrav1.WaitingForClusterInfrastructureReason, "Waiting for the Cluster's infrastructure to be provisioned")
		return ctrl.Result{}, nil
	}
	if st.VM.InstanceUUID == "" && s.Machine.Spec.Bootstrap.DataSecretName == nil {
		waiting(obj, infrav1.WaitingForBootstrapDataReason, "Waiting for the bootstrap provider to write the bootstrap data Secret")
		return ctrl.Result{}, nil
	}
	res, ok, err := r.inputs(ctx, s)
	if !ok || err != nil {
		return res, err
	}
	b, vm, stop, res, err := r.observe(ctx, s)
	if stop {
		if hypervisor.IsNotOwned(err) {
			return r.hypervisorError(obj, err)
		}
		return res, err
	}
	if vm == nil {
		return r.create(ctx, s, b, persist)
	}
	if st.Task == intentCreate {
		st.Task = ""
	}
	st.Provisioning.Failures = 0
	st.VM = vm.Ref
	if pid := obj.GetProviderID(); *pid == "" {
		*pid = vm.ProviderID // set once: it is immutable afterwards (CAPI contract, webhook)
	}
	if res, done, err := r.start(ctx, s, b, vm); !done || err != nil {
		return res, err
	}
	return r.running(ctx, s, b, vm)
}

// inputs fills the scope with the guest name and network; ok is false while something is missing.
func (r *Reconciler) inputs(ctx context.Context, s *hypervisor.Scope) (ctrl.Result, bool, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	name, err := r.computerName(ctx, s)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	st.ComputerName, s.ComputerName = name, name
	nics, ready, claims, err := r.nics(ctx, s)
	if err != nil {
		waiting(obj, infrav1.WaitingForIPAddressesReason, err.Error())
		return ctrl.Result{}, false, err
	}
	if !ready {
		waiting(obj, infrav1.WaitingForIPAddressesReason, "Waiting for IP addresses of claims "+claims)
		return ctrl.Result{}, false, nil
	}
	s.NICs = nics
	return ctrl.Result{}, true, nil
}

// create starts the VM, unless it was already provisioned once (a VM that vanished is not
// re-created: the Machine is replaced by CAPI instead) or a create may still be in flight.
func (r *Reconciler) create(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, persist func() error) (ctrl.Result, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if ptr.Deref(st.Initialization.Provisioned, false) || st.VM.InstanceUUID != "" {
		waiting(obj, infrav1.VMMissingReason, fmt.Sprintf("VM %s is gone from the hypervisor; delete the Machine to replace it", st.VM.ID))
		return ctrl.Result{}, nil
	}
	if st.Task == intentCreate {
		if wait := st.Provisioning.Since.Add(r.CreateGrace).Sub(r.now()); wait > 0 {
			waiting(obj, infrav1.CloningReason, "A create was sent but its answer was lost; waiting for its VM")
			return ctrl.Result{RequeueAfter: min(wait, r.PollInterval)}, nil
		}
	} else if wait := st.Provisioning.Since.Add(r.retryAfter(st)).Sub(r.now()); wait > 0 {
		// The TaskFailed condition stays: it says why the clone is tried again later.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	// The bootstrap data is read only here: a VM that exists never needs it again.
	var err error
	if s.UserData, s.Format, err = r.bootstrapData(ctx, s); err != nil {
		waiting(obj, infrav1.WaitingForBootstrapDataReason, err.Error())
		return ctrl.Result{}, err
	}
	if s.UserData == nil {
		waiting(obj, infrav1.WaitingForBootstrapDataReason, "Waiting for the bootstrap data Secret")
		return ctrl.Result{}, nil
	}
	if s.RunsInGuest() {
		if s.Format != FormatPowerShell {
			return r.hypervisorError(obj, hypervisor.Errorf(infrav1.InvalidSpecReason, "%s", formatMessage(s.Format)))
		}
		// Started through the guest agent once the VM runs: never stored in the VM config.
		s.UserData = nil
	}
	committed := false
	s.CreateMayRun = st.Task == intentCreate
	s.Commit = func(where infrav1.VMReference) error {
		// The cache may lag behind a create this controller already sent: ask the API server.
		live := r.Kind.NewObject()
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			return fmt.Errorf("read the machine's status.task from the API server: %w", err)
		}
		// A lost create past its grace period is retried; anything else in flight is not.
		if t := live.GetMachineStatus().Task; t != "" && (t != intentCreate || st.Task != intentCreate) {
			return fmt.Errorf("status.task is %q on the API server: a create is already under way", t)
		}
		st.Task = intentCreate
		st.Provisioning = infrav1.Provisioning{State: infrav1.StateCloning, Since: metav1.NewTime(r.now()), Failures: st.Provisioning.Failures}
		st.VM.Host = where.Host
		if err := persist(); err != nil {
			return fmt.Errorf("record create intent: %w", err)
		}
		committed = true
		return nil
	}
	ref, err := b.Create(ctx, s)
	if err != nil {
		return r.createFailed(obj, err, committed, s.CreateMayRun)
	}
	r.observeCreate(s)
	waiting(obj, infrav1.CloningReason, "Creating the VM from template")
	r.Recorder.Eventf(obj, nil, "Normal", "Creating", "Create", "Creating VM (task %s)", ref)
	return r.afterTask(s, ref), nil
}

// createFailed shows a create that did not start. One that may be under way keeps its intent, so
// no second VM is created while the first may still come: its VM is looked for until the grace
// period is over, and then a create still running is. A create the hypervisor refused, or one
// stopped before its call, is tried again; an earlier create that may be under way (earlier)
// keeps its intent whatever a later attempt met before its call.
func (r *Reconciler) createFailed(obj hypervisor.Object, err error, committed, earlier bool) (ctrl.Result, error) {
	st := obj.GetMachineStatus()
	var pending *hypervisor.CreatePending
	switch {
	case errors.As(err, &pending) && committed:
		waiting(obj, infrav1.HypervisorErrorReason, fmt.Sprintf(
			"%v; the create may have reached the hypervisor: its VM is looked for for %s before another is sent", err, r.CreateGrace))
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	case errors.As(err, &pending):
		waiting(obj, infrav1.CloningReason, err.Error())
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	case committed || !earlier:
		st.Task = ""
		r.setState(obj, infrav1.StatePending)
	}
	return r.hypervisorError(obj, err)
}

// retryAfter is how long after a failed create task the next create waits: PollInterval doubled
// per failure in a row, at most 30 PollIntervals (10s to 5m by default). It is counted from
// status, so a restarted manager keeps it.
func (r *Reconciler) retryAfter(st *infrav1.MachineStatus) time.Duration {
	if st.Provisioning.Failures <= 0 {
		return 0
	}
	return min(r.PollInterval<<min(st.Provisioning.Failures-1, 5), 30*r.PollInterval)
}

// start delivers the bootstrap data and powers the VM on; done is true once it runs.
func (r *Reconciler) start(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM) (ctrl.Result, bool, error) {
	obj := s.InfraMachine
	if !vm.Delivered {
		ref, err := b.Deliver(ctx, s, vm)
		if err != nil {
			res, err := r.hypervisorError(obj, err)
			return res, false, err
		}
		r.setState(obj, infrav1.StateConfiguring)
		waiting(obj, infrav1.ConfiguringReason, "Writing the bootstrap data into the VM")
		return r.afterTask(s, ref), false, nil
	}
	if vm.Power == hypervisor.PoweredOn {
		return ctrl.Result{}, true, nil
	}
	ref, err := b.PowerOn(ctx, s, vm)
	if err != nil {
		res, err := r.hypervisorError(obj, err)
		return res, false, err
	}
	r.setState(obj, infrav1.StatePoweringOn)
	waiting(obj, infrav1.PoweringOnReason, "Powering on the VM")
	return r.afterTask(s, ref), false, nil
}

// running records addresses, the guest's bootstrap report and the Node link of a running VM.
func (r *Reconciler) running(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM) (ctrl.Result, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	r.bootstrapReport(s, vm)
	r.observeNodeReady(s)
	if res, done, err := r.runInGuest(ctx, s, b, vm); !done || err != nil {
		return res, err
	}
	if addrs := guest.MachineAddresses(vm.IPs, s.ComputerName); len(addrs) > 0 {
		st.Addresses = addrs
	}
	if len(st.Addresses) == 0 {
		r.setState(obj, infrav1.StateWaitingForAddresses)
		waiting(obj, infrav1.WaitingForAddressesReason, "Waiting for the guest to report an IP address of the VM's NICs")
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	}
	if *obj.GetProviderID() == "" {
		waiting(obj, infrav1.WaitingForAddressesReason, "Waiting for the VM's BIOS UUID")
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	}
	r.setState(obj, infrav1.StateProvisioned)
	st.Initialization.Provisioned = ptr.To(true)
	setProvisioned(obj, metav1.ConditionTrue, infrav1.ProvisionedReason, "")
	settle(b, s)

	joined, err := r.linkNode(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !joined {
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	}
	if vm.UserDataPresent {
		ref, err := b.ClearUserData(ctx, s, vm)
		if err != nil {
			return r.hypervisorError(obj, err)
		}
		return r.afterTask(s, ref), nil
	}
	return ctrl.Result{}, nil
}

// bootstrapReport mirrors the guest's report on BootstrapSucceeded (Windows only: Linux
// guests bootstrap with CABPK data, which reports nothing).
func (r *Reconciler) bootstrapReport(s *hypervisor.Scope, vm *hypervisor.VM) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	if s.Linux() {
		return
	}
	if vm.Report != "" {
		rep, err := guestos.ParseReport(vm.Report)
		if err != nil {
			setBootstrap(obj, metav1.ConditionUnknown, infrav1.WaitingForGuestReason, err.Error())
			return
		}
		st.Bootstrap = rep
		r.observeReport(s, rep)
	}
	if s.Machine.Status.NodeRef.IsDefined() && st.Bootstrap.State != guestos.ReportFailed {
		setBootstrap(obj, metav1.ConditionTrue, infrav1.BootstrapSucceededReason, "")
		return
	}
	switch st.Bootstrap.State {
	case "":
		setBootstrap(obj, metav1.ConditionFalse, infrav1.WaitingForGuestReason, "Waiting for the guest to report bootstrap progress")
	case guestos.ReportSucceeded:
		setBootstrap(obj, metav1.ConditionTrue, infrav1.BootstrapSucceededReason, "")
	case guestos.ReportFailed:
		setBootstrap(obj, metav1.ConditionFalse, infrav1.BootstrapFailedReason, reportMessage(st.Bootstrap))
	case guestos.ReportRebooting:
		setBootstrap(obj, metav1.ConditionFalse, infrav1.BootstrapRebootingReason, reportMessage(st.Bootstrap))
	default:
		setBootstrap(obj, metav1.ConditionFalse, infrav1.BootstrapRunningReason, reportMessage(st.Bootstrap))
	}
}

func reportMessage(b infrav1.BootstrapStatus) string {
	msg := "step " + b.Step
	if b.Message != "" {
		msg += ": " + b.Message
	}
	if b.LogTail != "" {
		msg += "\nlog tail:\n" + b.LogTail
	}
	return msg
}

// linkNode sets the Node's providerID when no cloud provider did; joined is true once the
// Machine has its Node.
func (r *Reconciler) linkNode(ctx context.Context, s *hypervisor.Scope) (bool, error) {
	if s.Machine.Status.NodeRef.IsDefined() {
		return true, nil
	}
	cluster := client.ObjectKeyFromObject(s.Cluster)
	err := r.watchNodes(ctx, cluster)
	var c client.Client
	if err == nil {
		c, err = r.ClusterCache.GetClient(ctx, cluster)
	}
	if err != nil {
		if errors.Is(err, clustercache.ErrClusterNotConnected) {
			return false, nil
		}
		return false, fmt.Errorf("reach the workload cluster %s: %w", cluster, err)
	}
	_, err = guest.LinkNode(ctx, c, guestos.NodeName(s.ComputerName), *s.InfraMachine.GetProviderID())
	return false, err // names the Node
}

// afterTask stores a task reference and schedules its first read.
func (r *Reconciler) afterTask(s *hypervisor.Scope, ref string) ctrl.Result {
	s.InfraMachine.GetMachineStatus().Task = ref
	if ref == "" {
		return ctrl.Result{RequeueAfter: time.Millisecond}
	}
	now := r.now()
	r.clock(s, func(c *stepClock) { c.task, c.taskAt = ref, now })
	// One read after a task poll interval, watched or not: a quick task (reconfigure, power on)
	// is seen then without waiting on the watch; a longer one is woken by the watch, with the
	// safety net behind it (taskWait). A delete's tasks (power off, destroy) are read first at a
	// fifth of that: their end is the machine's end, which a rollout waits for. A create's are
	// not: its machine then waits minutes for its guest, and a clone runs for many seconds.
	if !s.InfraMachine.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{RequeueAfter: r.TaskPollInterval / 5}
	}
	return ctrl.Result{RequeueAfter: r.TaskPollInterval}
}
