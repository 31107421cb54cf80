package webhooks

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-hypervcluster,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=hypervclusters,versions=v1beta1,name=validation.hypervcluster.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// HyperVCluster validates HyperVClusters. Hosts may be added, removed and changed: a VM's host is
// recorded by name in its HyperVMachine's status. Only controlPlaneEndpoint is immutable, once set.
type HyperVCluster struct {
	// Reader reads the cluster identity a cluster borrows; nil leaves that check to the reconciler.
	Reader client.Reader
}

// endpointImmutable tells the operator why controlPlaneEndpoint cannot change.
const endpointImmutable = "once set, the Cluster and the control plane's certificates use it; create a new cluster to change it"

// SetupWebhookWithManager registers the webhook with the manager's webhook server.
func (w *HyperVCluster) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.HyperVCluster{}).
		WithValidator(w).
		Complete()
}

// ValidateCreate validates a new HyperVCluster.
func (w *HyperVCluster) ValidateCreate(ctx context.Context, c *infrav1.HyperVCluster) (admission.Warnings, error) {
	errs := ValidateHyperVClusterSpec(c.Spec, field.NewPath("spec"))
	return nil, invalid("HyperVCluster", c.Name, append(errs, lentHyperV(ctx, w.Reader, c)...))
}

// ValidateUpdate rejects a change of a set controlPlaneEndpoint and validates a changed spec. An
// unchanged spec is not validated again, so metadata updates (finalizer removal) keep working on
// clusters stored before a validation rule was added.
func (w *HyperVCluster) ValidateUpdate(ctx context.Context, old, c *infrav1.HyperVCluster) (admission.Warnings, error) {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if old.Spec.ControlPlaneEndpoint != (clusterv1.APIEndpoint{}) {
		errs = append(errs, immutable(old.Spec.ControlPlaneEndpoint, c.Spec.ControlPlaneEndpoint,
			path.Child("controlPlaneEndpoint"), endpointImmutable)...)
	}
	if !apiequality.Semantic.DeepEqual(old.Spec, c.Spec) {
		errs = append(errs, ValidateHyperVClusterSpec(c.Spec, path)...)
		errs = append(errs, lentHyperV(ctx, w.Reader, c)...)
	}
	return nil, invalid("HyperVCluster", c.Name, errs)
}

// ValidateDelete allows every delete.
func (w *HyperVCluster) ValidateDelete(context.Context, *infrav1.HyperVCluster) (admission.Warnings, error) {
	return nil, nil
}
