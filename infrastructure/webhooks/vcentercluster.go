package webhooks

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-vcentercluster,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=vcenterclusters,versions=v1beta1,name=validation.vcentercluster.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// VCenterCluster validates VCenterClusters. server and datacenter are immutable: the cluster's VMs
// live there, and pointing the cluster elsewhere would leave them running unmanaged.
type VCenterCluster struct {
	// Reader reads the cluster identity a cluster borrows; nil leaves that check to the reconciler.
	Reader client.Reader
}

// clusterImmutable tells the operator why server and datacenter cannot change.
const clusterImmutable = "the cluster's VMs live there and would be leaked; create a new cluster to move to another vCenter"

// SetupWebhookWithManager registers the webhook with the manager's webhook server.
func (w *VCenterCluster) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.VCenterCluster{}).
		WithValidator(w).
		Complete()
}

// ValidateCreate validates a new VCenterCluster.
func (w *VCenterCluster) ValidateCreate(ctx context.Context, c *infrav1.VCenterCluster) (admission.Warnings, error) {
	errs := ValidateClusterSpec(c.Spec, field.NewPath("spec"))
	return nil, clusterInvalid(c, append(errs, lentVCenter(ctx, w.Reader, c)...))
}

// ValidateUpdate rejects a change of server or datacenter and validates a changed spec. An
// unchanged spec is not validated again, so metadata updates (finalizer removal) keep working on
// clusters stored before a validation rule was added.
func (w *VCenterCluster) ValidateUpdate(ctx context.Context, old, c *infrav1.VCenterCluster) (admission.Warnings, error) {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if c.Spec.Server != old.Spec.Server {
		errs = append(errs, field.Invalid(path.Child("server"), c.Spec.Server, "field is immutable: "+clusterImmutable))
	}
	if c.Spec.Datacenter != old.Spec.Datacenter {
		errs = append(errs, field.Invalid(path.Child("datacenter"), c.Spec.Datacenter, "field is immutable: "+clusterImmutable))
	}
	if !apiequality.Semantic.DeepEqual(old.Spec, c.Spec) {
		errs = append(errs, ValidateClusterSpec(c.Spec, path)...)
		errs = append(errs, failureDomainChanges(old.Spec, c.Spec, path)...)
		errs = append(errs, lentVCenter(ctx, w.Reader, c)...)
	}
	return nil, clusterInvalid(c, errs)
}

// ValidateDelete allows every delete.
func (w *VCenterCluster) ValidateDelete(context.Context, *infrav1.VCenterCluster) (admission.Warnings, error) {
	return nil, nil
}

func clusterInvalid(c *infrav1.VCenterCluster, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("VCenterCluster").GroupKind(), c.Name, errs)
}
