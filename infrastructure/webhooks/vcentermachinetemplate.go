package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/topology"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-vcentermachinetemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=vcentermachinetemplates,versions=v1beta1,name=validation.vcentermachinetemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-vcentermachinetemplate,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=vcentermachinetemplates,versions=v1beta1,name=default.vcentermachinetemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// VCenterMachineTemplate defaults and validates VCenterMachineTemplates; their spec is immutable
// (Cluster API's rule: a change is a new template, which rolls the machines out).
type VCenterMachineTemplate struct {
	// Reader reads the template's Cluster, its infrastructure cluster and the identity it borrows;
	// nil leaves the check of what the identity lends to the reconciler.
	Reader client.Reader
}

// machineTemplateImmutable tells the operator how a template is changed instead.
const machineTemplateImmutable = "VCenterMachineTemplate spec is immutable; create a new template and point the MachineDeployment (or control plane) at it"

// SetupWebhookWithManager registers the webhooks with the manager's webhook server.
func (w *VCenterMachineTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.VCenterMachineTemplate{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default fills unset fields of the template's spec.
func (w *VCenterMachineTemplate) Default(_ context.Context, t *infrav1.VCenterMachineTemplate) error {
	DefaultMachineSpec(&t.Spec.Template.Spec)
	return nil
}

// ValidateCreate validates a new template's spec.template.spec.
func (w *VCenterMachineTemplate) ValidateCreate(ctx context.Context, t *infrav1.VCenterMachineTemplate) (admission.Warnings, error) {
	path := field.NewPath("spec", "template", "spec")
	return nil, machineTemplateInvalid(t, append(ValidateMachineTemplateSpec(t.Spec.Template.Spec, path), lentVCenterMachine(ctx, w.Reader, t, &t.Spec.Template.Spec, path)...))
}

// ValidateMachineTemplateSpec is ValidateMachineSpec for a template's spec: the provider sets
// providerID on each machine, so a template carrying one would give every machine the same.
func ValidateMachineTemplateSpec(spec infrav1.VCenterMachineSpec, path *field.Path) field.ErrorList {
	errs := ValidateMachineSpec(spec, path)
	if spec.ProviderID != "" {
		errs = append(errs, field.Forbidden(path.Child("providerID"), "is set by the provider on each VCenterMachine; a template must not have one"))
	}
	return errs
}

// ValidateUpdate rejects any change of spec.template.spec (defaults aside). An unchanged spec is
// not validated again, so metadata updates (owner references, labels) keep working on templates
// stored before a validation rule was added.
func (w *VCenterMachineTemplate) ValidateUpdate(ctx context.Context, old, t *infrav1.VCenterMachineTemplate) (admission.Warnings, error) {
	if topology.DryRun(ctx, t) {
		return nil, nil // CAPI's ClusterClass controller comparing desired and current
	}
	before, after := old.Spec.Template.Spec.DeepCopy(), t.Spec.Template.Spec.DeepCopy()
	DefaultMachineSpec(before)
	DefaultMachineSpec(after)
	return nil, machineTemplateInvalid(t, immutable(before, after, field.NewPath("spec", "template", "spec"), machineTemplateImmutable))
}

// ValidateDelete allows every delete.
func (w *VCenterMachineTemplate) ValidateDelete(context.Context, *infrav1.VCenterMachineTemplate) (admission.Warnings, error) {
	return nil, nil
}

func machineTemplateInvalid(t *infrav1.VCenterMachineTemplate, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("VCenterMachineTemplate").GroupKind(), t.Name, errs)
}
