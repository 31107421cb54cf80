package webhooks

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupWithManager registers every infrastructure webhook with the manager's webhook server. The
// cluster, machine and machine template webhooks read cluster identities (and a machine's Cluster)
// from the manager's cache.
func SetupWithManager(mgr ctrl.Manager) error {
	r := mgr.GetClient()
	for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		&VCenterMachine{Reader: r}, &VCenterMachineTemplate{Reader: r}, &VCenterCluster{Reader: r}, &VCenterClusterTemplate{},
		&HyperVMachine{Reader: r}, &HyperVMachineTemplate{Reader: r}, &HyperVCluster{Reader: r}, &HyperVClusterTemplate{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}
