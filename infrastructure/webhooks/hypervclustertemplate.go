package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/topology"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-hypervclustertemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=hypervclustertemplates,versions=v1beta1,name=validation.hypervclustertemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// HyperVClusterTemplate validates HyperVClusterTemplates; their spec is immutable.
type HyperVClusterTemplate struct{}

// hyperVClusterTemplateImmutable tells the operator how a template is changed instead.
const hyperVClusterTemplateImmutable = "HyperVClusterTemplate spec is immutable; create a new template and point the ClusterClass at it"

// SetupWebhookWithManager registers the webhook with the manager's webhook server.
func (w *HyperVClusterTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.HyperVClusterTemplate{}).
		WithValidator(w).
		Complete()
}

// ValidateCreate validates a new template's spec.template.spec.
func (w *HyperVClusterTemplate) ValidateCreate(_ context.Context, t *infrav1.HyperVClusterTemplate) (admission.Warnings, error) {
	return nil, invalid("HyperVClusterTemplate", t.Name,
		ValidateHyperVClusterSpec(t.Spec.Template.Spec, field.NewPath("spec", "template", "spec")))
}

// ValidateUpdate rejects any change of spec.template.spec; an unchanged spec is not validated
// again (see VCenterMachineTemplate.ValidateUpdate).
func (w *HyperVClusterTemplate) ValidateUpdate(ctx context.Context, old, t *infrav1.HyperVClusterTemplate) (admission.Warnings, error) {
	if topology.DryRun(ctx, t) {
		return nil, nil // CAPI's ClusterClass controller comparing desired and current
	}
	return nil, invalid("HyperVClusterTemplate", t.Name, immutable(old.Spec.Template.Spec, t.Spec.Template.Spec,
		field.NewPath("spec", "template", "spec"), hyperVClusterTemplateImmutable))
}

// ValidateDelete allows every delete.
func (w *HyperVClusterTemplate) ValidateDelete(context.Context, *infrav1.HyperVClusterTemplate) (admission.Warnings, error) {
	return nil, nil
}
