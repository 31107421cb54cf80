package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/topology"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-hypervmachinetemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=hypervmachinetemplates,versions=v1beta1,name=validation.hypervmachinetemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-hypervmachinetemplate,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=hypervmachinetemplates,versions=v1beta1,name=default.hypervmachinetemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// HyperVMachineTemplate defaults and validates HyperVMachineTemplates; their spec is immutable
// (Cluster API's rule: a change is a new template, which rolls the machines out).
type HyperVMachineTemplate struct {
	// Reader reads the machine's Cluster, its infrastructure cluster and the identity it borrows;
	// nil leaves the check of what the identity lends to the reconciler.
	Reader client.Reader
}

// hyperVMachineTemplateImmutable tells the operator how a template is changed instead.
const hyperVMachineTemplateImmutable = "HyperVMachineTemplate spec is immutable; create a new template and point the MachineDeployment (or control plane) at it"

// SetupWebhookWithManager registers the webhooks with the manager's webhook server.
func (w *HyperVMachineTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.HyperVMachineTemplate{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default fills unset fields of the template's spec.
func (w *HyperVMachineTemplate) Default(_ context.Context, t *infrav1.HyperVMachineTemplate) error {
	DefaultHyperVMachineSpec(&t.Spec.Template.Spec)
	return nil
}

// ValidateCreate validates a new template's spec.template.spec.
func (w *HyperVMachineTemplate) ValidateCreate(ctx context.Context, t *infrav1.HyperVMachineTemplate) (admission.Warnings, error) {
	path := field.NewPath("spec", "template", "spec")
	return nil, invalid("HyperVMachineTemplate", t.Name,
		append(ValidateHyperVMachineTemplateSpec(t.Spec.Template.Spec, path), lentHyperVMachine(ctx, w.Reader, t, &t.Spec.Template.Spec, path)...))
}

// ValidateHyperVMachineTemplateSpec is ValidateHyperVMachineSpec for a template's spec: the
// provider sets providerID on each machine, so a template carrying one would give every machine
// the same.
func ValidateHyperVMachineTemplateSpec(spec infrav1.HyperVMachineSpec, path *field.Path) field.ErrorList {
	errs := ValidateHyperVMachineSpec(spec, path)
	if spec.ProviderID != "" {
		errs = append(errs, field.Forbidden(path.Child("providerID"), "is set by the provider on each HyperVMachine; a template must not have one"))
	}
	return errs
}

// ValidateUpdate rejects any change of spec.template.spec (defaults aside); an unchanged spec is
// not validated again (see VCenterMachineTemplate.ValidateUpdate).
func (w *HyperVMachineTemplate) ValidateUpdate(ctx context.Context, old, t *infrav1.HyperVMachineTemplate) (admission.Warnings, error) {
	if topology.DryRun(ctx, t) {
		return nil, nil // CAPI's ClusterClass controller comparing desired and current
	}
	before, after := old.Spec.Template.Spec.DeepCopy(), t.Spec.Template.Spec.DeepCopy()
	DefaultHyperVMachineSpec(before)
	DefaultHyperVMachineSpec(after)
	return nil, invalid("HyperVMachineTemplate", t.Name,
		immutable(before, after, field.NewPath("spec", "template", "spec"), hyperVMachineTemplateImmutable))
}

// ValidateDelete allows every delete.
func (w *HyperVMachineTemplate) ValidateDelete(context.Context, *infrav1.HyperVMachineTemplate) (admission.Warnings, error) {
	return nil, nil
}
