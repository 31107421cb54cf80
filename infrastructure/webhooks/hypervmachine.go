package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-hypervmachine,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=hypervmachines,versions=v1beta1,name=validation.hypervmachine.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-hypervmachine,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=hypervmachines,versions=v1beta1,name=default.hypervmachine.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// HyperVMachine defaults and validates HyperVMachines. Their spec is immutable but for
// providerID, which the provider sets once.
type HyperVMachine struct {
	// Reader reads the machine's Cluster, its infrastructure cluster and the identity it borrows;
	// nil leaves the check of what the identity lends to the reconciler.
	Reader client.Reader
}

// hyperVMachineImmutable tells the operator how a machine is changed instead.
const hyperVMachineImmutable = "create a new HyperVMachineTemplate and roll out the MachineDeployment"

// SetupWebhookWithManager registers the webhooks with the manager's webhook server.
func (w *HyperVMachine) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.HyperVMachine{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default fills unset fields.
func (w *HyperVMachine) Default(_ context.Context, m *infrav1.HyperVMachine) error {
	DefaultHyperVMachineSpec(&m.Spec)
	return nil
}

// ValidateCreate validates a new HyperVMachine.
func (w *HyperVMachine) ValidateCreate(ctx context.Context, m *infrav1.HyperVMachine) (admission.Warnings, error) {
	path := field.NewPath("spec")
	errs := append(ValidateHyperVMachineSpec(m.Spec, path), logRequest(nil, m)...)
	return nil, invalid("HyperVMachine", m.Name, append(errs, lentHyperVMachine(ctx, w.Reader, m, &m.Spec, path)...))
}

// ValidateUpdate rejects spec changes (defaults aside) other than setting providerID once. The
// spec itself is not validated again (see VCenterMachine.ValidateUpdate).
func (w *HyperVMachine) ValidateUpdate(_ context.Context, old, m *infrav1.HyperVMachine) (admission.Warnings, error) {
	path := field.NewPath("spec")
	before, after := old.Spec.DeepCopy(), m.Spec.DeepCopy()
	DefaultHyperVMachineSpec(before)
	DefaultHyperVMachineSpec(after)
	var errs field.ErrorList
	if before.ProviderID != "" && after.ProviderID != before.ProviderID {
		errs = append(errs, field.Invalid(path.Child("providerID"), after.ProviderID,
			"field is immutable once set: it is the Node's identity ("+before.ProviderID+")"))
	}
	before.ProviderID, after.ProviderID = "", ""
	errs = append(errs, logRequest(old, m)...)
	errs = append(errs, immutable(before, after, path, hyperVMachineImmutable)...)
	return nil, invalid("HyperVMachine", m.Name, errs)
}

// ValidateDelete allows every delete.
func (w *HyperVMachine) ValidateDelete(context.Context, *infrav1.HyperVMachine) (admission.Warnings, error) {
	return nil, nil
}
