package machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/loginsecret"
)

// FormatPowerShell is the bootstrap format that a guest without cloudbase-init can run as it is.
const FormatPowerShell = "powershell"

// guestRunStarted says that capwin started the bootstrap data through the guest agent.
const guestRunStarted = "The bootstrap script was started through the guest agent"

// runInGuest starts the bootstrap data through the hypervisor's guest agent, for images without
// cloudbase-init (spec.guestCredentialsRef). It reports on BootstrapSucceeded only: the VM is
// provisioned whether or not the script runs. done is false when the reconcile stops here.
func (r *Reconciler) runInGuest(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM) (ctrl.Result, bool, error) {
	obj := s.InfraMachine
	if !s.RunsInGuest() || vm.GuestRunStarted {
		return ctrl.Result{}, true, nil
	}
	if !vm.ToolsRunning {
		setBootstrap(obj, metav1.ConditionFalse, infrav1.WaitingForGuestReason,
			"Waiting for the guest agent (VMware Tools / Hyper-V integration services) to start the bootstrap script")
		return ctrl.Result{}, true, nil
	}
	creds, err := r.guestCredentials(ctx, s)
	if err != nil {
		setBootstrap(obj, metav1.ConditionFalse, infrav1.GuestCredentialsMissingReason, err.Error())
		return ctrl.Result{RequeueAfter: r.PollInterval}, false, nil
	}
	data, format, err := r.bootstrapData(ctx, s)
	if err != nil || data == nil {
		setBootstrap(obj, metav1.ConditionFalse, infrav1.GuestScriptNotStartedReason, fmt.Sprintf("bootstrap data: %v", err))
		return ctrl.Result{}, false, err
	}
	if format != FormatPowerShell {
		setBootstrap(obj, metav1.ConditionFalse, infrav1.GuestScriptNotStartedReason, formatMessage(format))
		return ctrl.Result{RequeueAfter: 10 * r.PollInterval}, false, nil
	}
	s.UserData, s.Format, s.GuestCredentials = data, format, creds
	ref, err := b.RunInGuest(ctx, s, vm)
	if err != nil {
		setBootstrap(obj, metav1.ConditionFalse, infrav1.GuestScriptNotStartedReason, err.Error())
		if _, ok := hypervisor.AsError(err); ok {
			// Wrong credentials: retrying often could lock the guest account out.
			r.Recorder.Eventf(obj, nil, "Warning", infrav1.GuestScriptNotStartedReason, "RunInGuest", "%v", err)
			return ctrl.Result{RequeueAfter: 10 * r.PollInterval}, false, nil
		}
		return ctrl.Result{RequeueAfter: r.PollInterval}, false, nil
	}
	setBootstrap(obj, metav1.ConditionFalse, infrav1.BootstrapRunningReason, guestRunStarted)
	r.Recorder.Eventf(obj, nil, "Normal", "BootstrapStarted", "RunInGuest", "Started the bootstrap script in the guest")
	return r.afterTask(s, ref), false, nil
}

func formatMessage(format string) string {
	return fmt.Sprintf("the bootstrap data has format %q, but spec.guestCredentialsRef runs it through the guest agent, "+
		"which needs format %q (set the WindowsConfig's spec.format to %s)", format, FormatPowerShell, FormatPowerShell)
}

// guestCredentials reads the Secret of spec.guestCredentialsRef (keys username and password).
func (r *Reconciler) guestCredentials(ctx context.Context, s *hypervisor.Scope) (*hypervisor.GuestCredentials, error) {
	return r.readGuestCredentials(ctx, s.InfraMachine.GetNamespace(), s.Spec.GuestCredentialsRef.Name)
}

// readGuestCredentials reads a guest login Secret (keys username and password) of the machine's
// namespace; a hypervisor login is refused.
func (r *Reconciler) readGuestCredentials(ctx context.Context, namespace, name string) (*hypervisor.GuestCredentials, error) {
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nil, fmt.Errorf("guest credentials Secret %s: %w", name, err)
	}
	if err := loginsecret.ForOtherUse(secret, "guest credentials"); err != nil {
		return nil, err // a hypervisor login is never sent into a guest
	}
	c := &hypervisor.GuestCredentials{Username: string(secret.Data["username"]), Password: string(secret.Data["password"])}
	if c.Username == "" || c.Password == "" {
		return nil, fmt.Errorf("guest credentials Secret %s needs the keys username and password", name)
	}
	return c, nil
}
