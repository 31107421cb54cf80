package hyperv_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/internal/guestos"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// netplanOptions is the part of a network-config file this test reads.
type netplanOptions struct {
	Ethernets map[string]struct {
		MTU    int32 `json:"mtu"`
		Routes []struct {
			To, Via string
			Metric  int32
		} `json:"routes"`
		Nameservers struct {
			Search []string `json:"search"`
		} `json:"nameservers"`
	} `json:"ethernets"`
}

// TestNetworkOptions: a Windows machine with a static address, routes (one with a metric), an MTU
// and search domains, bootstrapped through PowerShell Direct. The config drive's network-config
// carries them as netplan keys, and the launcher the guest ran over WinRM and PowerShell Direct
// configured its adapter with them: routes with their metric beside the default route, the MTU of
// both address families and the computer's DNS suffix search list.
func TestNetworkOptions(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, h, spec := guestRunCluster(t)
	spec.Network = []infrav1.HyperVNetworkDevice{{IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"},
		NetworkDeviceOptions: infrav1.NetworkDeviceOptions{MTU: ptr.To[int32](1400), SearchDomains: []string{"corp.example.com", "example.com"},
			Routes: []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](50)}, {To: "192.168.50.0/24", Via: "10.0.0.253"}}}}}
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "guest-admin", Namespace: f.ns},
		Data: map[string][]byte{"username": []byte("Administrator"), "password": []byte(guestPassword)}})).To(Succeed())
	mc := f.addMachine(t, "win-net-"+randSuffix(), "", []byte("#ps1_sysnative\r\n$CapwinData = 'e30='\r\n"), spec)

	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	vm, ok := vmOf(h, string(m.UID))
	g.Expect(ok).To(BeTrue())
	files, err := readDrive(h, vm)
	g.Expect(err).NotTo(HaveOccurred())
	var np netplanOptions
	g.Expect(yaml.Unmarshal(files["network-config"], &np)).To(Succeed())
	e := np.Ethernets["id0"]
	g.Expect(e.MTU).To(BeEquivalentTo(1400))
	g.Expect(e.Nameservers.Search).To(Equal([]string{"corp.example.com", "example.com"}))
	g.Expect(e.Routes).To(HaveLen(3))
	g.Expect(e.Routes[1].To + " via " + e.Routes[1].Via).To(Equal("10.20.0.0/16 via 10.0.0.254"))
	g.Expect(e.Routes[1].Metric).To(BeEquivalentTo(50))

	g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) { v.Heartbeat = true })).To(Succeed())
	waitBootstrap(t, mc, infrav1.BootstrapRunningReason, "started")
	vm, _ = vmOf(h, string(m.UID))
	g.Expect(vm.GuestNetwork.SuffixSearchList).To(Equal([]string{"corp.example.com", "example.com"}))
	g.Expect(vm.GuestNetwork.Adapters).To(Equal([]hypervsim.GuestAdapter{{
		MAC: guest.NormalizeMAC(hyperv.MAC(string(m.UID), 0)), Addresses: []string{"10.0.0.21/24"}, DNSServers: []string{"10.0.0.2"},
		Routes: []guest.LaunchRoute{{To: "0.0.0.0/0", Via: "10.0.0.1"}, {To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50},
			{To: "192.168.50.0/24", Via: "10.0.0.253"}},
		MTU4: 1400, MTU6: 1400,
	}}))
}

// TestNetworkOptionsCloudbaseInit: a cloudbase-init Windows machine (no guestCredentialsRef) with
// routes, an MTU and search domains is admitted; its config drive carries capwin's network
// document beside the netplan config, and the simulated guest, booted from that drive as
// cloudbase-init boots it, ends up with every route, its metric, both MTUs and the search list
// through the bootstrap's network step.
func TestNetworkOptionsCloudbaseInit(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv1"
	spec.Network = []infrav1.HyperVNetworkDevice{{IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"},
		NetworkDeviceOptions: infrav1.NetworkDeviceOptions{MTU: ptr.To[int32](1400), SearchDomains: []string{"corp.example.com", "example.com"},
			Routes: []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](50)}, {To: "192.168.50.0/24", Via: "10.0.0.253"}}}}}
	userData, err := userdata.Render(userdata.Input{Format: userdata.FormatCloudConfig, KubernetesVersion: "v1.36.3",
		Join: userdata.Join{APIServerEndpoint: "10.0.0.10:6443", Token: "abcdef.0123456789abcdef",
			CACertHashes: []string{"sha256:" + strings.Repeat("0", 64)}, CRISocket: "npipe:////./pipe/containerd-containerd"},
		PauseImage: "registry.k8s.io/pause:3.10", Binaries: userdata.Binaries{Directory: `C:\k`}})
	g.Expect(err).NotTo(HaveOccurred())
	mc := f.addMachine(t, "win-cbi-"+randSuffix(), "", userData, spec)

	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	vm, ok := vmOf(host("hv1"), string(m.UID))
	g.Expect(ok).To(BeTrue())
	files, err := readDrive(host("hv1"), vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveKey(guestos.NetworkFile))
	var macs []string
	for _, nic := range vm.NICs {
		macs = append(macs, nic.MAC)
	}
	sim := simguest.Boot(t.Context(), simguest.Config{UserData: files["user-data"], Network: files[guestos.NetworkFile], MACs: macs,
		Hostname: vm.Name, Faults: simguest.Faults{FailAt: "time"}, Log: logr.Discard()})
	t.Cleanup(sim.Stop)
	g.Eventually(sim.Done(), 30*time.Second).Should(BeClosed())
	var stepErr *simguest.StepError
	g.Expect(errors.As(sim.Err(), &stepErr)).To(BeTrue(), "%v", sim.Err())
	g.Expect(stepErr.Step).To(Equal("time"), "the network step succeeded; the run stops at the injected failure after it")
	g.Expect(sim.Network().SuffixSearchList).To(Equal([]string{"corp.example.com", "example.com"}))
	g.Expect(sim.Network().Adapters).To(Equal([]hypervsim.GuestAdapter{{
		MAC: guest.NormalizeMAC(hyperv.MAC(string(m.UID), 0)), Addresses: []string{"10.0.0.21/24"}, DNSServers: []string{"10.0.0.2"},
		Routes: []guest.LaunchRoute{{To: "0.0.0.0/0", Via: "10.0.0.1"}, {To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50},
			{To: "192.168.50.0/24", Via: "10.0.0.253"}},
		MTU4: 1400, MTU6: 1400,
	}}))
}
