package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"

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
	st.VM, st.DataDisks, st.Security = vm.Ref, vm.DataDisks, vm.Security
	if pid := obj.GetProviderID(); *pid == "" {
		*pid = vm.ProviderID // set once: it is immutable afterwards (CAPI contract, webhook)
	}
	if res, done, err := r.start(ctx, s, b, vm); !done || err != nil {
		return res, err
	}
	wait := r.collectLogs(ctx, s, b, vm)
	res, err = r.running(ctx, s, b, vm)
	if wait > 0 && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
		res.RequeueAfter = wait
	}
	return res, err
}

// inputs fills the scope with the guest name and network; ok is false while something is missing.
func (r *Reconciler) inputs(ctx context.Context, s *hypervisor.Scope) (ctrl.Result, bool, error) {
	obj, st := s.InfraMachine, s.InfraMachine.GetMachineStatus()
	name, err := r.computerName(ctx, s)
	if _, terminal := hypervisor.AsError(err); terminal {
		res, err := r.hypervisorError(obj, err)
		return res, false, err
	}
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
	if err := r.tag(ctx, s, b, vm); err != nil {
		res, err := r.hypervisorError(obj, err)
		return res, false, err
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

// tag attaches the machine's hypervisor tags when its backend has them (Capabilities.Tags) and records them
// in status: before the first power-on, and again on later reconciles (the backend makes no call
// once status reports them all). A failure keeps a VM that is off from booting without its tags; a
// VM that runs goes on, with a warning event, and is tagged on a later reconcile.
func (r *Reconciler) tag(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM) error {
	t := b.Capabilities().Tags
	if t == nil {
		return nil
	}
	tags, err := t.Tag(ctx, s, vm)
	switch {
	case err == nil:
		s.InfraMachine.GetMachineStatus().Tags = tags
	case vm.Power != hypervisor.PoweredOff:
		r.Recorder.Eventf(s.InfraMachine, nil, "Warning", hypervisor.Reason(err), "Tag", "%s", err.Error())
		return nil
	}
	return err
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
		return ctrl.Result{RequeueAfter: r.guestWait(s)}, nil
	}
	if *obj.GetProviderID() == "" {
		waiting(obj, infrav1.WaitingForAddressesReason, "Waiting for the VM's BIOS UUID")
		return ctrl.Result{RequeueAfter: r.PollInterval}, nil
	}
	r.setState(obj, infrav1.StateProvisioned)
	st.Initialization.Provisioned = ptr.To(true)
	setProvisioned(obj, metav1.ConditionTrue, infrav1.ProvisionedReason, "")

	joined, err := r.linkNode(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !joined {
		return ctrl.Result{RequeueAfter: r.guestWait(s)}, nil
	}
	if vm.UserDataPresent {
		ref, err := b.ClearUserData(ctx, s, vm)
		if err != nil {
			return r.hypervisorError(obj, err)
		}
		return r.afterTask(s, ref), nil
	}
	settle(b, s)
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
	if st.Bootstrap.State == "" && s.RunsInGuest() && vm.GuestRunStarted {
		// Started by capwin: the condition keeps saying so until the script's first report.
		setBootstrap(obj, metav1.ConditionFalse, infrav1.BootstrapRunningReason, guestRunStarted+"; waiting for its first report")
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
