package webhooks

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/internal/topology"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1beta1-windowsconfigtemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigtemplates,versions=v1beta1,name=validation.windowsconfigtemplate.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/mutate-bootstrap-cluster-x-k8s-io-v1beta1-windowsconfigtemplate,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigtemplates,versions=v1beta1,name=default.windowsconfigtemplate.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// WindowsConfigTemplate defaults and validates WindowsConfigTemplates; their spec is immutable.
type WindowsConfigTemplate struct{}

// immutableMessage tells the operator how changes are made instead.
const immutableMessage = "WindowsConfigTemplate spec is immutable; create a new template and point the MachineDeployment at it (that is how a rollout happens)"

// SetupWebhookWithManager registers the webhooks with the manager's webhook server.
func (w *WindowsConfigTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.WindowsConfigTemplate{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default fills unset fields of the template's spec.
func (w *WindowsConfigTemplate) Default(_ context.Context, t *bootstrapv1.WindowsConfigTemplate) error {
	DefaultSpec(&t.Spec.Template.Spec)
	return nil
}

// ValidateCreate validates a new template's spec.template.spec.
func (w *WindowsConfigTemplate) ValidateCreate(_ context.Context, t *bootstrapv1.WindowsConfigTemplate) (admission.Warnings, error) {
	path := field.NewPath("spec", "template", "spec")
	if errs := ValidateSpec(&t.Spec.Template.Spec, path); len(errs) > 0 {
		return nil, templateInvalid(t, errs)
	}
	return specWarnings(&t.Spec.Template.Spec, path), nil
}

// ValidateUpdate rejects any change of spec.template.spec (defaults aside). An unchanged spec is
// not validated again, so metadata updates (owner references, labels) keep working on templates
// stored before a validation rule was added.
func (w *WindowsConfigTemplate) ValidateUpdate(ctx context.Context, old, t *bootstrapv1.WindowsConfigTemplate) (admission.Warnings, error) {
	if topology.DryRun(ctx, t) {
		return nil, nil // CAPI's ClusterClass controller comparing desired and current
	}
	before, after := old.Spec.Template.Spec.DeepCopy(), t.Spec.Template.Spec.DeepCopy()
	DefaultSpec(before)
	DefaultSpec(after)
	if !apiequality.Semantic.DeepEqual(before, after) {
		return nil, templateInvalid(t, field.ErrorList{field.Forbidden(field.NewPath("spec", "template", "spec"), immutableMessage)})
	}
	return nil, nil
}

// ValidateDelete allows every delete.
func (w *WindowsConfigTemplate) ValidateDelete(context.Context, *bootstrapv1.WindowsConfigTemplate) (admission.Warnings, error) {
	return nil, nil
}

func templateInvalid(t *bootstrapv1.WindowsConfigTemplate, errs field.ErrorList) error {
	return apierrors.NewInvalid(bootstrapv1.GroupVersion.WithKind("WindowsConfigTemplate").GroupKind(), t.Name, errs)
}
