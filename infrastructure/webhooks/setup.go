package webhooks

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupWithManager registers every infrastructure webhook with the manager's webhook server. The
// cluster webhooks read cluster identities from the manager's cache.
func SetupWithManager(mgr ctrl.Manager) error {
	for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		&VCenterMachine{}, &VCenterMachineTemplate{}, &VCenterCluster{Reader: mgr.GetClient()}, &VCenterClusterTemplate{},
		&HyperVMachine{}, &HyperVMachineTemplate{}, &HyperVCluster{Reader: mgr.GetClient()}, &HyperVClusterTemplate{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}
