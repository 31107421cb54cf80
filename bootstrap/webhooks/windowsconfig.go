package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1beta1-windowsconfig,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigs,versions=v1beta1,name=validation.windowsconfig.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/mutate-bootstrap-cluster-x-k8s-io-v1beta1-windowsconfig,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=windowsconfigs,versions=v1beta1,name=default.windowsconfig.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// WindowsConfig defaults and validates WindowsConfigs.
type WindowsConfig struct{}

// SetupWebhookWithManager registers the webhooks with the manager's webhook server.
func (w *WindowsConfig) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.WindowsConfig{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default fills unset fields.
func (w *WindowsConfig) Default(_ context.Context, c *bootstrapv1.WindowsConfig) error {
	DefaultSpec(&c.Spec)
	return nil
}

// ValidateCreate validates a new WindowsConfig.
func (w *WindowsConfig) ValidateCreate(_ context.Context, c *bootstrapv1.WindowsConfig) (admission.Warnings, error) {
	return validateConfig(c)
}

// ValidateUpdate validates a changed WindowsConfig. The spec stays mutable, as CABPK's is: the
// data Secret is written once, so a change only matters before that.
func (w *WindowsConfig) ValidateUpdate(_ context.Context, _, c *bootstrapv1.WindowsConfig) (admission.Warnings, error) {
	return validateConfig(c)
}

// ValidateDelete allows every delete.
func (w *WindowsConfig) ValidateDelete(context.Context, *bootstrapv1.WindowsConfig) (admission.Warnings, error) {
	return nil, nil
}

func validateConfig(c *bootstrapv1.WindowsConfig) (admission.Warnings, error) {
	path := field.NewPath("spec")
	if errs := ValidateSpec(&c.Spec, path); len(errs) > 0 {
		return nil, apierrors.NewInvalid(bootstrapv1.GroupVersion.WithKind("WindowsConfig").GroupKind(), c.Name, errs)
	}
	return specWarnings(&c.Spec, path), nil
}
