package webhooks

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupWithManager registers every infrastructure webhook with the manager's webhook server.
func SetupWithManager(mgr ctrl.Manager) error {
	for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		&VCenterMachine{}, &VCenterMachineTemplate{}, &VCenterCluster{}, &VCenterClusterTemplate{},
		&HyperVMachine{}, &HyperVMachineTemplate{}, &HyperVCluster{}, &HyperVClusterTemplate{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}
