package badinput_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/test/badinput"
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
	{"route next hop outside the subnet", func(s *infrav1.VCenterMachineSpec) {
		staticNIC("10.0.0.1", "10.0.0.21/24")(s)
		s.OS, s.Network[0].Routes = infrav1.OSLinux, []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.9.1"}}
	}, "network[0].routes[0].via"},
	{"multicast MAC", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MACAddr = "01:50:56:aa:bb:cc" }, "network[0].macAddr"},
	{"MAC twice", func(s *infrav1.VCenterMachineSpec) {
		s.Network = []infrav1.NetworkDevice{{NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:aa:bb:01"}, {NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:AA:BB:01"}}
	}, "network[1].macAddr"},
}

// vcenterClusterRows break each rule of webhooks.ValidateClusterSpec that the schema lets by.
var vcenterClusterRows = []row[infrav1.VCenterClusterSpec]{
	{"server with credentials", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://admin:pw@" + vcsim.URL.Host }, "server"},
	{"server with a query", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://" + vcsim.URL.Host + "?x=1" }, "server"},
	{"server with a fragment", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://" + vcsim.URL.Host + "#x" }, "server"},
	{"server without a host", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://:443" }, "server"},
	{"server port out of range", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc.example.com:70000" }, "server"},
	{"CA bundle not PEM", func(s *infrav1.VCenterClusterSpec) { s.CABundle = []byte("not a certificate") }, "caBundle"},
	{"zone and region of one category", func(s *infrav1.VCenterClusterSpec) {
		s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "rack-a", Placement: infrav1.Placement{Datastore: "LocalDS_0"},
			Zone: &infrav1.VCenterTag{Category: "k8s", Name: "rack-a"}, Region: &infrav1.VCenterTag{Category: "k8s", Name: "west"}}}
	}, "failureDomains[0].region.category"},
}

// vcenterBackend: VCenterMachines and VCenterClusters on vcsim.
var vcenterBackend = backend{
	name: "vcenter",
	fixture: func(t *testing.T) *fixture {
		return newFixture(t, &infrav1.VCenterCluster{Spec: validVCenterCluster()}, true)
	},
	machineRows: cases(vcenterMachineRows, validVCenterMachine, func(s infrav1.VCenterMachineSpec) machineObjects {
		tpl := &infrav1.VCenterMachineTemplate{Spec: infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: s}}}
		m := &infrav1.VCenterMachine{Spec: s}
		_, tplErr := (&webhooks.VCenterMachineTemplate{}).ValidateCreate(ctx, tpl.DeepCopy())
		_, mErr := (&webhooks.VCenterMachine{}).ValidateCreate(ctx, m.DeepCopy())
		return machineObjects{template: tpl, templateStatus: &tpl.Status, machine: m, templateErr: tplErr, machineErr: mErr}
	}),
	clusterRows: cases(vcenterClusterRows, validVCenterCluster, func(s infrav1.VCenterClusterSpec) clusterObjects {
		c := &infrav1.VCenterCluster{Spec: s}
		_, cErr := (&webhooks.VCenterCluster{}).ValidateCreate(ctx, c.DeepCopy())
		_, tplErr := (&webhooks.VCenterClusterTemplate{}).ValidateCreate(ctx, &infrav1.VCenterClusterTemplate{
			Spec: infrav1.VCenterClusterTemplateSpec{Template: infrav1.VCenterClusterTemplateResource{Spec: s}}})
		return clusterObjects{cluster: c, clusterErr: cErr, templateErr: tplErr}
	}),
	machine: func() badinput.Object { return &infrav1.VCenterMachine{Spec: validVCenterMachine()} },
	undefaulted: func() (machine, func(Gomega)) {
		spec := validVCenterMachine()
		spec.PowerOffMode = infrav1.PowerOffTrySoft // the webhook adds guestSoftPowerOffTimeout
		return &infrav1.VCenterMachine{Spec: spec}, func(Gomega) {}
	},
	vms: vcenterVMs,
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
