package admit_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
)

var check = admit.Webhook[*infrav1.VCenterMachine](&webhooks.VCenterMachine{}, &webhooks.VCenterMachine{})

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
