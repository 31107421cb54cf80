package admit_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/admit"
)

// machineWebhook stands in for a provider's VCenterMachine webhook, which internal/ does not
// import: one default, and a create rule that fails without that default, so a check that
// validates before it defaults is caught. The real webhooks run through admit in the
// reconcilers' tests and in test/integration/badinput.
type machineWebhook struct{}

func (machineWebhook) Default(_ context.Context, m *infrav1.VCenterMachine) error {
	if m.Spec.GuestSoftPowerOffTimeout == nil {
		m.Spec.GuestSoftPowerOffTimeout = &metav1.Duration{Duration: 5 * time.Minute}
	}
	return nil
}

func (machineWebhook) ValidateCreate(_ context.Context, m *infrav1.VCenterMachine) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if m.Spec.GuestSoftPowerOffTimeout == nil {
		errs = append(errs, field.Required(spec.Child("guestSoftPowerOffTimeout"), "set by the defaults"))
	}
	if t := m.Spec.Template; t == "" || t[len(t)-1] == '/' {
		errs = append(errs, field.Invalid(spec.Child("template"), t, "must name a template"))
	}
	return nil, errs.ToAggregate()
}

func (machineWebhook) ValidateUpdate(context.Context, *infrav1.VCenterMachine, *infrav1.VCenterMachine) (admission.Warnings, error) {
	return nil, nil
}

func (machineWebhook) ValidateDelete(context.Context, *infrav1.VCenterMachine) (admission.Warnings, error) {
	return nil, nil
}

var check = admit.Webhook[*infrav1.VCenterMachine](machineWebhook{}, machineWebhook{})

func TestWebhookDefaultsInPlaceThenValidates(t *testing.T) {
	g := NewWithT(t)
	m := &infrav1.VCenterMachine{Spec: infrav1.VCenterMachineSpec{Template: "win", PowerOffMode: infrav1.PowerOffTrySoft}}
	g.Expect(check(context.Background(), m)).To(Succeed())
	g.Expect(m.Spec.GuestSoftPowerOffTimeout).NotTo(BeNil(), "the webhook's default")

	m.Spec.Template = "templates/"
	err := check(context.Background(), m)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template")))
}

func TestWebhookIgnoresOtherKinds(t *testing.T) {
	NewWithT(t).Expect(check(context.Background(), &infrav1.HyperVMachine{})).To(Succeed())
}

func TestReasonIsTheAPIs(t *testing.T) {
	g := NewWithT(t)
	g.Expect(admit.InvalidSpecReason).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(admit.InvalidSpecReason).To(Equal(bootstrapv1.InvalidSpecReason))
}
