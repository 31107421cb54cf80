package diagnostics

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/guestos"
)

// Places on the guest an operator looks at (bootstrap/pkg/userdata).
const (
	bootstrapLog     = `C:\var\log\capwin\bootstrap.log`
	cloudbaseInitLog = `C:\Program Files\Cloudbase Solutions\Cloudbase-Init\log\cloudbase-init.log`
)

// WhyNoNode is the likely reason a Machine has no Node: the first thing missing in the order a
// join needs them (bootstrap data, VM, guest report, script, kubelet).
func WhyNoNode(s *Story) string {
	m := s.Machine
	switch {
	case s.Workload.Err != nil:
		return fmt.Sprintf("the workload cluster cannot be read (%v); the Node may exist: check the control plane", s.Workload.Err)
	case !m.DeletionTimestamp.IsZero():
		return "the Machine is being deleted"
	case s.Config != nil && !ptr.Deref(s.Config.Status.Initialization.DataSecretCreated, false):
		return "the bootstrap data is not written yet: " + condition(s.Config.Status.Conditions, bootstrapv1.DataSecretAvailableCondition)
	case m.Spec.Bootstrap.DataSecretName == nil:
		return fmt.Sprintf("the Machine has no bootstrap data yet (bootstrap config %s %s)", m.Spec.Bootstrap.ConfigRef.Kind, m.Spec.Bootstrap.ConfigRef.Name)
	case s.Infra == nil:
		return fmt.Sprintf("the infrastructure machine %s %s is missing or not a capwin kind", s.InfraKind, s.InfraName)
	}
	st := s.Infra.GetMachineStatus()
	if !ptr.Deref(st.Initialization.Provisioned, false) {
		return fmt.Sprintf("the VM is not provisioned (state %s): %s", st.Provisioning.State,
			condition(s.Infra.GetConditions(), infrav1.VMProvisionedCondition))
	}
	b := st.Bootstrap
	switch b.State {
	case "":
		if c := meta.FindStatusCondition(s.Infra.GetConditions(), infrav1.BootstrapSucceededCondition); c != nil &&
			(c.Reason == infrav1.GuestScriptNotStartedReason || c.Reason == infrav1.GuestCredentialsMissingReason) {
			return "the bootstrap script was not started in the guest: " + c.Message
		}
		return "the VM runs but the guest has not reported any bootstrap progress: cloudbase-init has not run the user data " +
			"(open the VM console; read " + cloudbaseInitLog + "), or VMware Tools / the Hyper-V data exchange service is not running"
	case guestos.ReportFailed:
		return fmt.Sprintf("the bootstrap script failed at step %s: %s (log tail above; the whole log is %s on the VM)", b.Step, b.Message, bootstrapLog)
	case guestos.ReportRebooting:
		return fmt.Sprintf("the guest is rebooting during step %s; the script continues after the restart", b.Step)
	case guestos.ReportSucceeded:
		return fmt.Sprintf("the script reports success but no Node %q registered: check the kubelet service on the VM "+
			`(Get-Service kubelet), the VM's clock, and that the Node name is not taken`, guestos.NodeName(st.ComputerName))
	}
	msg := "the bootstrap script is at step " + b.Step
	if hint := stepHints[b.Step]; hint != "" {
		msg += ": " + hint
	}
	return msg
}

// stepHints say what usually holds a running step up.
var stepHints = map[string]string{
	"features":   "installing Windows features; a restart follows",
	"downloads":  "downloading binaries: check the proxy settings and that the URLs are reachable from the VM",
	"containerd": "configuring containerd",
	"join": "kubeadm join runs: check that the VM reaches the control plane endpoint and that no firewall drops " +
		"6443/TCP; an expired token shows as 'kubeadm join exited with code 1'",
	"preJoin":  "your preJoinCommands run",
	"postJoin": "your postJoinCommands run",
}

// condition formats a condition as "Reason: message" ("no <type> condition" when absent).
func condition(conds []metav1.Condition, t string) string {
	c := meta.FindStatusCondition(conds, t)
	if c == nil {
		return "no " + t + " condition"
	}
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + strings.TrimSpace(c.Message)
}
