package hyperv_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestPlacementSpreads: six machines of one MachineDeployment land two on each host; a pinned
// machine lands on its host.
func TestPlacementSpreads(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	var machines []*machine
	for range 6 {
		mc := f.addMachine(t, "win-md-spread-"+randSuffix(), "md-spread", userData, defaultSpec())
		machines = append(machines, mc)
		mc.waitReason(t, infrav1.WaitingForAddressesReason) // one after the other: each sees the others' hosts
	}
	perHost := map[string]int{}
	for _, mc := range machines {
		perHost[mc.get(g).Status.VM.Host]++
	}
	g.Expect(perHost).To(Equal(map[string]int{"hv1": 2, "hv2": 2, "hv3": 2}))

	spec := defaultSpec()
	spec.Host = "hv3"
	pinned := f.addMachine(t, "win-pinned-"+randSuffix(), "md-spread", userData, spec)
	g.Expect(pinned.waitReason(t, infrav1.WaitingForAddressesReason).Status.VM.Host).To(Equal("hv3"))
}

// TestHostDown: a host that stops answering is shown on the HyperVCluster and new machines go
// to the others; the cluster stays available.
func TestHostDown(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	hosts[0].srv.SetDown(true)
	t.Cleanup(func() { hosts[0].srv.SetDown(false) })
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
		g.Expect(f.hc.Status.Hosts).To(ContainElement(And(
			HaveField("Name", "hv1"), HaveField("Available", false), HaveField("Message", ContainSubstring("hv1")))))
		c := condition(f.hc.Status.Conditions, infrav1.HypervisorAvailableCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("hv1"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	for range 2 {
		mc := f.addMachine(t, "win-md-down-"+randSuffix(), "md-down", userData, defaultSpec())
		g.Expect(mc.waitReason(t, infrav1.WaitingForAddressesReason).Status.VM.Host).NotTo(Equal("hv1"))
	}
}

// TestHostCredentialsAndTrust: a refused login and an untrusted certificate make the cluster
// unavailable with the reason named.
func TestHostCredentialsAndTrust(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mutate func(*infrav1.HyperVClusterSpec)
		reason string
	}{
		"wrong password": {func(s *infrav1.HyperVClusterSpec) {
			for i := range s.Hosts {
				s.Hosts[i].CredentialsRef.Name = "wrong"
			}
		}, infrav1.AuthenticationFailedReason},
		"untrusted certificate": {func(s *infrav1.HyperVClusterSpec) {
			for i := range s.Hosts {
				s.Hosts[i].CABundle = hosts[(i+1)%len(hosts)].srv.CACertPEM()
			}
		}, infrav1.TLSVerificationFailedReason},
		"missing Secret": {func(s *infrav1.HyperVClusterSpec) {
			for i := range s.Hosts {
				s.Hosts[i].CredentialsRef.Name = "absent"
			}
		}, infrav1.CredentialsNotFoundReason},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := newCluster(t, tc.mutate)
			wrongSecret(t, f)
			g.Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
				c := condition(f.hc.Status.Conditions, infrav1.HypervisorAvailableCondition)
				g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(c.Reason).To(Equal(tc.reason), c.Message)
			}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
			g.Expect(f.hc.Status.Initialization.Provisioned).To(BeNil())
		})
	}
}

// TestFailureDomainSwitch: a failure domain's virtualSwitch replaces the cluster's on its hosts: a
// NIC naming no switch connects to it, and the hosts are checked for it (a host lacking it is
// shown unavailable, naming the switch); a domain without one keeps the cluster's switch.
func TestFailureDomainSwitch(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	hosts[0].AddSwitch("rack-a-sw")
	f := newCluster(t, func(s *infrav1.HyperVClusterSpec) {
		s.FailureDomains = []infrav1.HyperVFailureDomain{{Name: "rack-a", VirtualSwitch: "rack-a-sw"}, {Name: "rack-b"}, {Name: "rack-c", VirtualSwitch: "rack-c-sw"}}
		s.Hosts[0].FailureDomain, s.Hosts[1].FailureDomain, s.Hosts[2].FailureDomain = "rack-a", "rack-b", "rack-c"
	})
	f.provisioned(t)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
		g.Expect(f.hc.Status.Hosts).To(ContainElements(
			And(HaveField("Name", "hv1"), HaveField("Available", true)),
			And(HaveField("Name", "hv2"), HaveField("Available", true)),
			And(HaveField("Name", "hv3"), HaveField("Available", false), HaveField("Message", ContainSubstring(`virtual switch "rack-c-sw" does not exist`)))))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	for fd, want := range map[string]struct{ host, sw string }{"rack-a": {"hv1", "rack-a-sw"}, "rack-b": {"hv2", vswitch}} {
		spec := defaultSpec()
		spec.Network = append(spec.Network, infrav1.HyperVNetworkDevice{NetworkName: vswitch, DHCP4: true})
		mc := f.addMachineIn(t, fd, "win-"+fd+"-"+randSuffix(), "", userData, spec)
		m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
		g.Expect(m.Status.VM.Host).To(Equal(want.host))
		vm, ok := vmOf(host(want.host), string(m.UID))
		g.Expect(ok).To(BeTrue())
		g.Expect(vm.NICs).To(HaveLen(2))
		g.Expect(vm.NICs[0].Switch).To(Equal(want.sw), "a NIC naming no switch gets the domain's")
		g.Expect(vm.NICs[1].Switch).To(Equal(vswitch), "a NIC naming its switch keeps it")
	}
}
