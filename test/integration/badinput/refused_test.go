package badinput_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/test/badinput"
)

// TestMachineRefused stores, for each provider's row, a machine template and the machine CAPI
// would clone from it. Both webhooks reject the spec; the template reconciler marks the template
// (Ready False, InvalidSpec) and still publishes its capacity, and the machine reconciler
// refuses the machine without a finalizer and without a VM.
func TestMachineRefused(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.fixture(t)
			for i, tc := range b.machineRows {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					g := NewWithT(t)
					o := tc.objects()
					badinput.Rejects(g, o.templateErr, "spec.template.spec."+tc.field)
					badinput.Rejects(g, o.machineErr, "spec."+tc.field)

					name := fmt.Sprintf("vm-%d", i)
					o.template.SetName(name + "-template")
					o.template.SetNamespace(f.ns)
					o.template.SetLabels(labels())
					g.Expect(k8s.Create(ctx, o.template)).To(Succeed(), "the schema admits it")
					f.addMachine(t, name, o.machine)
					expectRefused(t, o.machine, infrav1.VMProvisionedCondition, "spec."+tc.field)
					g.Expect(o.machine.GetFinalizers()).To(BeEmpty(), "a machine refused from the start never had a VM")
					g.Expect(b.vms(string(o.machine.GetUID()))).To(BeZero())
					expectRefused(t, o.template, infrav1.ReadyCondition, "spec.template.spec."+tc.field)
					g.Expect(o.templateStatus.NodeInfo.OperatingSystem).NotTo(BeEmpty(), "the template's capacity is still published")
				})
			}
		})
	}
}

// TestMachineWithoutWebhookDefaults stores machines the defaulting webhook never saw; the
// reconciler applies the webhook's defaults itself, creates the VM and never writes them.
func TestMachineWithoutWebhookDefaults(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.fixture(t)
			m, unwritten := b.undefaulted()
			f.addMachine(t, "undefaulted", m)
			g := NewWithT(t)
			g.Eventually(func() int { return b.vms(string(m.GetUID())) }, 30*time.Second, 100*time.Millisecond).Should(Equal(1))
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(hypervisor.SpecOf(m).GuestSoftPowerOffTimeout).To(BeNil(), "webhook defaults are used, not written")
			unwritten(g)
		})
	}
}

// TestClusterRefused stores, for each provider's row, an infrastructure cluster that turned
// invalid after its infrastructure was reported provisioned, and a machine of it. The cluster
// webhooks (cluster and template) reject the spec; the cluster reconciler refuses the cluster,
// and the machine reconciler refuses the machine naming the cluster's bad field, without a VM.
func TestClusterRefused(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range b.clusterRows {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					g := NewWithT(t)
					o := tc.objects()
					badinput.Rejects(g, o.clusterErr, "spec."+tc.field)
					badinput.Rejects(g, o.templateErr, "spec.template.spec."+tc.field)

					f := newFixture(t, o.cluster, true)
					expectRefused(t, o.cluster, infrav1.HypervisorAvailableCondition, "spec."+tc.field)
					m := b.machine()
					f.addMachine(t, "vm", m)
					expectRefused(t, m, infrav1.VMProvisionedCondition, "spec."+tc.field)
					g.Expect(b.vms(string(m.GetUID()))).To(BeZero())
				})
			}
		})
	}
}
