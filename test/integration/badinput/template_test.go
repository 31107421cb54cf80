package badinput_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/test/badinput"
)

// TestTemplateWithProviderIDRefused covers the one rule only templates have: the provider sets
// providerID on each machine, so a template carrying one would give every machine the same. (A
// machine made from it is refused as VMNotOwned when that VM is another object's.)
func TestTemplateWithProviderIDRefused(t *testing.T) {
	f := newFixture(t, &infrav1.VCenterCluster{Spec: validVCenterCluster()}, false)
	vc := validVCenterMachine()
	vc.ProviderID = "vsphere://42107b4f-3cf1-4a6b-9f1e-6a1f7e0d2c11"
	hv := validHyperVMachine()
	hv.ProviderID = "hyperv://hv1/3b0c2f4e-8d5a-4a43-9a7e-2f6a1c0d9e21"
	vct := &infrav1.VCenterMachineTemplate{Spec: infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: vc}}}
	hvt := &infrav1.HyperVMachineTemplate{Spec: infrav1.HyperVMachineTemplateSpec{Template: infrav1.HyperVMachineTemplateResource{Spec: hv}}}
	g := NewWithT(t)
	for _, tc := range []struct {
		tpl      badinput.Object
		validate func() (admission.Warnings, error)
	}{
		{vct, func() (admission.Warnings, error) {
			return (&webhooks.VCenterMachineTemplate{}).ValidateCreate(ctx, vct.DeepCopy())
		}},
		{hvt, func() (admission.Warnings, error) {
			return (&webhooks.HyperVMachineTemplate{}).ValidateCreate(ctx, hvt.DeepCopy())
		}},
	} {
		_, err := tc.validate()
		badinput.Rejects(g, err, "spec.template.spec.providerID")
		tc.tpl.SetName("with-provider-id")
		tc.tpl.SetNamespace(f.ns)
		tc.tpl.SetLabels(labels())
		g.Expect(k8s.Create(ctx, tc.tpl)).To(Succeed(), "the schema admits it")
		expectRefused(t, tc.tpl, infrav1.ReadyCondition, "spec.template.spec.providerID")
	}
}
