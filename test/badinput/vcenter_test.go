package badinput_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/test/badinput"
)

// validVCenterMachine is a DHCP Windows VM cloned from one of vcsim's VMs.
func validVCenterMachine() infrav1.VCenterMachineSpec {
	return infrav1.VCenterMachineSpec{
		Template: "DC0_H0_VM0", Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_H0/Resources"},
		NumCPUs: 2, MemoryMiB: 4096, Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}},
	}
}

func staticNIC(gw string, addrs ...string) func(*infrav1.VCenterMachineSpec) {
	return func(s *infrav1.VCenterMachineSpec) {
		s.Network[0] = infrav1.NetworkDevice{NetworkName: "VM Network", IPAddrs: addrs, Gateway4: gw}
	}
}

func ipPool(group *string) corev1.TypedLocalObjectReference {
	return corev1.TypedLocalObjectReference{APIGroup: group, Kind: "InClusterIPPool", Name: "pool"}
}

// vcenterMachineRows break each rule of webhooks.ValidateMachineSpec that the schema lets by.
var vcenterMachineRows = []row[infrav1.VCenterMachineSpec]{
	{"template is a folder", func(s *infrav1.VCenterMachineSpec) { s.Template = "/DC0/vm/templates/" }, "template"},
	{"template path with ..", func(s *infrav1.VCenterMachineSpec) { s.Template = "/DC0/vm/../DC0_H0_VM0" }, "template"},
	{"linked clone of a library item", func(s *infrav1.VCenterMachineSpec) {
		s.ContentLibrary, s.CloneMode, s.Snapshot = "lib", infrav1.LinkedClone, "base"
	}, "cloneMode"},
	{"guest operations on Linux", func(s *infrav1.VCenterMachineSpec) {
		s.OS, s.GuestCredentialsRef = infrav1.OSLinux, &infrav1.SecretReference{Name: "admin"}
	}, "guestCredentialsRef"},
	{"gateway outside the subnet", staticNIC("10.0.1.1", "10.0.0.21/24"), "network[0].gateway4"},
	{"gateway is the own address", staticNIC("10.0.0.21", "10.0.0.21/24"), "network[0].gateway4"},
	{"pool next to dhcp4", func(s *infrav1.VCenterMachineSpec) {
		s.Network[0].AddressesFromPools = []corev1.TypedLocalObjectReference{ipPool(ptr.To("ipam.cluster.x-k8s.io"))}
	}, "network[0].addressesFromPools"},
	{"pool without API group", func(s *infrav1.VCenterMachineSpec) {
		s.Network[0] = infrav1.NetworkDevice{NetworkName: "VM Network", AddressesFromPools: []corev1.TypedLocalObjectReference{ipPool(nil)}}
	}, "network[0].addressesFromPools[0].apiGroup"},
	{"multicast MAC", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MACAddr = "01:50:56:aa:bb:cc" }, "network[0].macAddr"},
	{"MAC twice", func(s *infrav1.VCenterMachineSpec) {
		s.Network = []infrav1.NetworkDevice{{NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:aa:bb:01"}, {NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:AA:BB:01"}}
	}, "network[1].macAddr"},
}

// TestVCenterMachineRefused stores, for each row, a VCenterMachineTemplate and the VCenterMachine
// CAPI would clone from it. Both webhooks reject the spec; the template reconciler marks the
// template (Ready False, InvalidSpec) and still publishes its capacity, and the machine
// reconciler refuses the machine without a finalizer and without a VM.
func TestVCenterMachineRefused(t *testing.T) {
	f := newFixture(t, &infrav1.VCenterCluster{Spec: validVCenterCluster()}, true)
	for i, tc := range vcenterMachineRows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			spec := validVCenterMachine()
			tc.mutate(&spec)
			name := fmt.Sprintf("vm-%d", i)
			tpl := &infrav1.VCenterMachineTemplate{Spec: infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: spec}}}
			_, err := (&webhooks.VCenterMachineTemplate{}).ValidateCreate(ctx, tpl.DeepCopy())
			badinput.Rejects(g, err, "spec.template.spec."+tc.field)
			m := &infrav1.VCenterMachine{Spec: spec}
			_, err = (&webhooks.VCenterMachine{}).ValidateCreate(ctx, m.DeepCopy())
			badinput.Rejects(g, err, "spec."+tc.field)

			tpl.Name, tpl.Namespace, tpl.Labels = name+"-template", f.ns, labels()
			g.Expect(k8s.Create(ctx, tpl)).To(Succeed(), "the schema admits it")
			f.addMachine(t, name, m)
			expectRefused(t, m, infrav1.VMProvisionedCondition, "spec."+tc.field)
			g.Expect(m.Finalizers).To(BeEmpty(), "a machine refused from the start never had a VM")
			g.Expect(vcenterVMs(string(m.UID))).To(BeZero())
			expectRefused(t, tpl, infrav1.ReadyCondition, "spec.template.spec."+tc.field)
			g.Expect(tpl.Status.NodeInfo.OperatingSystem).NotTo(BeEmpty(), "the template's capacity is still published")
		})
	}
}

// TestVCenterMachineWithoutWebhookDefaults stores machines the defaulting webhook never saw; the
// reconciler applies the webhook's defaults itself, creates the VM and never writes them.
func TestVCenterMachineWithoutWebhookDefaults(t *testing.T) {
	f := newFixture(t, &infrav1.VCenterCluster{Spec: validVCenterCluster()}, true)
	spec := validVCenterMachine()
	spec.PowerOffMode = infrav1.PowerOffTrySoft // the webhook adds guestSoftPowerOffTimeout
	m := &infrav1.VCenterMachine{Spec: spec}
	f.addMachine(t, "undefaulted", m)
	g := NewWithT(t)
	g.Eventually(func() int { return vcenterVMs(string(m.UID)) }, 30*time.Second, 100*time.Millisecond).Should(Equal(1))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	g.Expect(m.Spec.GuestSoftPowerOffTimeout).To(BeNil(), "webhook defaults are used, not written")
}

// vcenterClusterRows break each rule of webhooks.ValidateClusterSpec that the schema lets by.
var vcenterClusterRows = []row[infrav1.VCenterClusterSpec]{
	{"server with credentials", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://admin:pw@" + vcsim.URL.Host }, "server"},
	{"server with a query", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://" + vcsim.URL.Host + "?x=1" }, "server"},
	{"server with a fragment", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://" + vcsim.URL.Host + "#x" }, "server"},
	{"server without a host", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://:443" }, "server"},
	{"server port out of range", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc.example.com:70000" }, "server"},
	{"CA bundle not PEM", func(s *infrav1.VCenterClusterSpec) { s.CABundle = []byte("not a certificate") }, "caBundle"},
}

// TestVCenterClusterRefused stores, for each row, a VCenterCluster that turned invalid after its
// infrastructure was reported provisioned, and a machine of it. The cluster webhooks (cluster and
// template) reject the spec; the cluster reconciler refuses the cluster, and the machine
// reconciler refuses the machine naming the cluster's bad field, without a VM.
func TestVCenterClusterRefused(t *testing.T) {
	for _, tc := range vcenterClusterRows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			spec := validVCenterCluster()
			tc.mutate(&spec)
			_, err := (&webhooks.VCenterCluster{}).ValidateCreate(ctx, &infrav1.VCenterCluster{Spec: spec})
			badinput.Rejects(g, err, "spec."+tc.field)
			_, err = (&webhooks.VCenterClusterTemplate{}).ValidateCreate(ctx, &infrav1.VCenterClusterTemplate{
				Spec: infrav1.VCenterClusterTemplateSpec{Template: infrav1.VCenterClusterTemplateResource{Spec: spec}}})
			badinput.Rejects(g, err, "spec.template.spec."+tc.field)

			vc := &infrav1.VCenterCluster{Spec: spec}
			f := newFixture(t, vc, true)
			expectRefused(t, vc, infrav1.HypervisorAvailableCondition, "spec."+tc.field)
			m := &infrav1.VCenterMachine{Spec: validVCenterMachine()}
			f.addMachine(t, "vm", m)
			expectRefused(t, m, infrav1.VMProvisionedCondition, "spec."+tc.field)
			g.Expect(vcenterVMs(string(m.UID))).To(BeZero())
		})
	}
}

// TestVCenterMachineWithVMStaysManaged: a machine whose VM exists is not refused when its spec
// turns invalid (changed with the webhooks off, or a rule added since it was created): the
// webhooks too admit updates of a spec stored before a rule was added, and its VM stays managed.
func TestVCenterMachineWithVMStaysManaged(t *testing.T) {
	f := newFixture(t, &infrav1.VCenterCluster{Spec: validVCenterCluster()}, true)
	m := &infrav1.VCenterMachine{Spec: validVCenterMachine()}
	f.addMachine(t, "grandfathered", m)
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(m.Status.VM.InstanceUUID).NotTo(BeEmpty())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	// The manager writes the machine too: change the spec of the version last read, again on a conflict.
	g.Eventually(func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		m.Spec.Template = "/DC0/vm/templates/"
		return k8s.Update(ctx, m)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(m.Status.Conditions).To(ContainElement(And(
		HaveField("Type", infrav1.VMProvisionedCondition), Not(HaveField("Reason", "InvalidSpec")))))
	g.Expect(vcenterVMs(string(m.UID))).To(Equal(1))
}
