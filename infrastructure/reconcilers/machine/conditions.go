package machine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

func setProvisioned(o hypervisor.Object, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(o, metav1.Condition{Type: infrav1.VMProvisionedCondition, Status: status, Reason: reason, Message: msg})
}

// waiting marks VMProvisioned false with a reason the user can act on.
func waiting(o hypervisor.Object, reason, msg string) {
	setProvisioned(o, metav1.ConditionFalse, reason, msg)
}

func setBootstrap(o hypervisor.Object, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(o, metav1.Condition{Type: infrav1.BootstrapSucceededCondition, Status: status, Reason: reason, Message: msg})
}

// setState moves the lifecycle state, restarting its clock only on a change.
func (r *Reconciler) setState(o hypervisor.Object, state infrav1.ProvisioningState) {
	p := &o.GetMachineStatus().Provisioning
	if p.State != state {
		p.State, p.Since = state, metav1.NewTime(r.now())
	}
}
