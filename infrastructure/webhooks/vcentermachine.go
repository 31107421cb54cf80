package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-vcentermachine,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=vcentermachines,versions=v1beta1,name=validation.vcentermachine.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-vcentermachine,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=vcentermachines,versions=v1beta1,name=default.vcentermachine.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// VCenterMachine defaults and validates VCenterMachines. Their spec is immutable but for
// providerID, which the provider sets once.
type VCenterMachine struct {
	// Reader reads the machine's Cluster, its infrastructure cluster and the identity it borrows;
	// nil leaves the check of what the identity lends to the reconciler.
	Reader client.Reader
}

// machineImmutable tells the operator how a machine is changed instead.
const machineImmutable = "create a new VCenterMachineTemplate and roll out the MachineDeployment"

// SetupWebhookWithManager registers the webhooks with the manager's webhook server.
func (w *VCenterMachine) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.VCenterMachine{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default fills unset fields.
func (w *VCenterMachine) Default(_ context.Context, m *infrav1.VCenterMachine) error {
	DefaultMachineSpec(&m.Spec)
	return nil
}

// ValidateCreate validates a new VCenterMachine.
func (w *VCenterMachine) ValidateCreate(ctx context.Context, m *infrav1.VCenterMachine) (admission.Warnings, error) {
	path := field.NewPath("spec")
	errs := append(ValidateMachineSpec(m.Spec, path), logRequest(nil, m)...)
	return nil, machineInvalid(m, append(errs, lentVCenterMachine(ctx, w.Reader, m, &m.Spec, path)...))
}

// ValidateUpdate rejects spec changes (defaults aside) other than setting providerID once. The
// spec itself is not validated again: it cannot change, and metadata updates (finalizer removal)
// must keep working on machines stored before a validation rule was added.
func (w *VCenterMachine) ValidateUpdate(_ context.Context, old, m *infrav1.VCenterMachine) (admission.Warnings, error) {
	path := field.NewPath("spec")
	before, after := old.Spec.DeepCopy(), m.Spec.DeepCopy()
	DefaultMachineSpec(before)
	DefaultMachineSpec(after)
	var errs field.ErrorList
	if before.ProviderID != "" && after.ProviderID != before.ProviderID {
		errs = append(errs, field.Invalid(path.Child("providerID"), after.ProviderID,
			"field is immutable once set: it is the Node's identity ("+before.ProviderID+")"))
	}
	before.ProviderID, after.ProviderID = "", ""
	errs = append(errs, logRequest(old, m)...)
	errs = append(errs, immutable(before, after, path, machineImmutable)...)
	return nil, machineInvalid(m, errs)
}

// ValidateDelete allows every delete.
func (w *VCenterMachine) ValidateDelete(context.Context, *infrav1.VCenterMachine) (admission.Warnings, error) {
	return nil, nil
}

func machineInvalid(m *infrav1.VCenterMachine, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("VCenterMachine").GroupKind(), m.Name, errs)
}
