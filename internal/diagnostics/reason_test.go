package diagnostics

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func TestWhyNoNode(t *testing.T) {
	provisioned := func(b infrav1.BootstrapStatus, conds ...metav1.Condition) *infrav1.VCenterMachine {
		return &infrav1.VCenterMachine{Status: infrav1.MachineStatus{Initialization: infrav1.MachineInitializationStatus{Provisioned: ptr.To(true)},
			ComputerName: "WIN-0", Bootstrap: b, Conditions: conds}}
	}
	cases := map[string]struct {
		story func(*Story)
		want  string
	}{
		"workload unreachable": {func(s *Story) { s.Workload.Err = errors.New("connection refused") }, "the workload cluster cannot be read (connection refused)"},
		"no bootstrap data": {func(s *Story) {
			s.Machine.Spec.Bootstrap.DataSecretName = nil
			s.Config = &bootstrapv1.WindowsConfig{Status: bootstrapv1.WindowsConfigStatus{Conditions: []metav1.Condition{{
				Type: bootstrapv1.DataSecretAvailableCondition, Reason: bootstrapv1.WorkloadClusterNotReachableReason, Message: "no connection"}}}}
		}, "the bootstrap data is not written yet: WorkloadClusterNotReachable: no connection"},
		"infra missing": {func(s *Story) { s.Infra = nil }, "the infrastructure machine VCenterMachine win-0 is missing"},
		"VM not provisioned": {func(s *Story) {
			s.Infra = &infrav1.VCenterMachine{Status: infrav1.MachineStatus{Provisioning: infrav1.Provisioning{State: infrav1.StateCloning},
				Conditions: []metav1.Condition{{Type: infrav1.VMProvisionedCondition, Reason: infrav1.CloningReason, Message: "Creating the VM from template"}}}}
		}, "the VM is not provisioned (state Cloning): Cloning: Creating the VM from template"},
		"no report": {func(s *Story) { s.Infra = provisioned(infrav1.BootstrapStatus{}) }, "the guest has not reported any bootstrap progress"},
		"not started": {func(s *Story) {
			s.Infra = provisioned(infrav1.BootstrapStatus{}, metav1.Condition{Type: infrav1.BootstrapSucceededCondition,
				Reason: infrav1.GuestScriptNotStartedReason, Message: "The credential is invalid"})
		}, "the bootstrap script was not started in the guest: The credential is invalid"},
		"rebooting": {func(s *Story) { s.Infra = provisioned(infrav1.BootstrapStatus{Step: "features", State: "Rebooting"}) }, "rebooting during step features"},
		"joining":   {func(s *Story) { s.Infra = provisioned(infrav1.BootstrapStatus{Step: "join", State: "Running"}) }, "at step join: kubeadm join runs"},
		"succeeded": {func(s *Story) { s.Infra = provisioned(infrav1.BootstrapStatus{Step: "finish", State: "Succeeded"}) }, `no Node "win-0" registered`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			s := &Story{
				Machine: &clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("win-0")}}},
				Infra:   provisioned(infrav1.BootstrapStatus{}), InfraKind: "VCenterMachine", InfraName: "win-0",
			}
			tc.story(s)
			g.Expect(WhyNoNode(s)).To(ContainSubstring(tc.want))
		})
	}
}
