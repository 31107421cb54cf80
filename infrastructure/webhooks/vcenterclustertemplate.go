package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/topology"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-vcenterclustertemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=vcenterclustertemplates,versions=v1beta1,name=validation.vcenterclustertemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// VCenterClusterTemplate validates VCenterClusterTemplates; their spec is immutable.
type VCenterClusterTemplate struct{}

// clusterTemplateImmutable tells the operator how a template is changed instead.
const clusterTemplateImmutable = "VCenterClusterTemplate spec is immutable; create a new template and point the ClusterClass at it"

// SetupWebhookWithManager registers the webhook with the manager's webhook server.
func (w *VCenterClusterTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.VCenterClusterTemplate{}).
		WithValidator(w).
		Complete()
}

// ValidateCreate validates a new template's spec.template.spec.
func (w *VCenterClusterTemplate) ValidateCreate(_ context.Context, t *infrav1.VCenterClusterTemplate) (admission.Warnings, error) {
	return nil, clusterTemplateInvalid(t, ValidateClusterSpec(t.Spec.Template.Spec, field.NewPath("spec", "template", "spec")))
}

// ValidateUpdate rejects any change of spec.template.spec; an unchanged spec is not validated
// again (see VCenterMachineTemplate.ValidateUpdate).
func (w *VCenterClusterTemplate) ValidateUpdate(ctx context.Context, old, t *infrav1.VCenterClusterTemplate) (admission.Warnings, error) {
	if topology.DryRun(ctx, t) {
		return nil, nil // CAPI's ClusterClass controller comparing desired and current
	}
	return nil, clusterTemplateInvalid(t, immutable(old.Spec.Template.Spec, t.Spec.Template.Spec,
		field.NewPath("spec", "template", "spec"), clusterTemplateImmutable))
}

// ValidateDelete allows every delete.
func (w *VCenterClusterTemplate) ValidateDelete(context.Context, *infrav1.VCenterClusterTemplate) (admission.Warnings, error) {
	return nil, nil
}

func clusterTemplateInvalid(t *infrav1.VCenterClusterTemplate, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("VCenterClusterTemplate").GroupKind(), t.Name, errs)
}
