package guest

import (
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func decodeNetwork(g Gomega, md []byte) (Metadata, netplan) {
	var m Metadata
	g.Expect(yaml.Unmarshal(md, &m)).To(Succeed())
	var np netplan
	if m.Network != "" {
		g.Expect(m.NetworkEncoding).To(Equal("base64"))
		raw, err := base64.StdEncoding.DecodeString(m.Network)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(yaml.Unmarshal(raw, &np)).To(Succeed())
	}
	return m, np
}

func TestBuildMetadata(t *testing.T) {
	g := NewWithT(t)
	md, err := BuildMetadata("uid-1", "win-md-0-abc", []NIC{
		{MAC: "00:50:56:AA:BB:CC", Addresses: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"}},
		{MAC: "00:50:56:aa:bb:cd", DHCP4: true},
	}, false)
	g.Expect(err).NotTo(HaveOccurred())
	m, np := decodeNetwork(g, md)
	g.Expect(m.InstanceID).To(Equal("uid-1"))
	g.Expect(m.LocalHostname).To(Equal("win-md-0-abc"))
	g.Expect(np.Version).To(Equal(2))
	g.Expect(np.Ethernets).To(HaveLen(2))
	e := np.Ethernets["id0"]
	g.Expect(e.Match.MACAddress).To(Equal("00:50:56:aa:bb:cc"))
	g.Expect(e.SetName).To(BeEmpty(), "Windows names adapters itself")
	g.Expect(e.Addresses).To(Equal([]string{"10.0.0.21/24"}))
	g.Expect(e.Routes).To(Equal([]route{{To: "0.0.0.0/0", Via: "10.0.0.1"}}))
	g.Expect(e.Nameservers.Addresses).To(Equal([]string{"10.0.0.2"}))
	g.Expect(e.MTU).To(BeZero())
	g.Expect(np.Ethernets["id1"].DHCP4).To(BeTrue())

	// Linux guests get stable names.
	md, err = BuildMetadata("uid-2", "cp-0", []NIC{{MAC: "00:50:56:00:00:01", DHCP4: true}}, true)
	g.Expect(err).NotTo(HaveOccurred())
	_, np = decodeNetwork(g, md)
	g.Expect(np.Ethernets["id0"].SetName).To(Equal("eth0"))
}

func TestBuildMetadataRefusesBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		nics []NIC
		msg  string
	}{
		"no MAC":         {[]NIC{{DHCP4: true}}, "no MAC"},
		"not CIDR":       {[]NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5"}}}, "CIDR"},
		"bad gateway":    {[]NIC{{MAC: "00:50:56:00:00:01", Gateway4: "10.0.0.1; rm -rf"}}, "not an IP"},
		"route not CIDR": {[]NIC{{MAC: "00:50:56:00:00:01", DHCP4: true, Routes: []Route{{To: "10.20.0.0", Via: "10.0.0.1"}}}}, "CIDR"},
		"route across families": {[]NIC{{MAC: "00:50:56:00:00:01", DHCP4: true, Routes: []Route{{To: "10.20.0.0/16", Via: "fd00::1"}}}},
			"another address family"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := BuildMetadata("u", "h", tc.nics, false)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.msg)))
		})
	}
	_, err := BuildMetadata("", "h", nil, false)
	NewWithT(t).Expect(err).To(HaveOccurred())
}

// TestNetworkConfigOptions: routes with their metric, the MTU and the search domains are netplan
// v2 keys (cloud-init applies them all; docs/vcenter/networking.md says which cloudbase-init applies), on a
// DHCP NIC too, which then needs its MAC.
func TestNetworkConfigOptions(t *testing.T) {
	g := NewWithT(t)
	nic := NIC{MAC: "00:50:56:00:00:01", DHCP4: true, MTU: 9000, SearchDomains: []string{"corp.example.com"},
		Routes: []Route{{To: "10.20.1.0/24", Via: "10.0.0.254", Metric: 100}, {To: "fd20::/48", Via: "fe80::1"}}}
	g.Expect(nic.NeedsMAC()).To(BeTrue())
	_, network, err := BuildNoCloud("uid", "win", []NIC{nic}, false)
	g.Expect(err).NotTo(HaveOccurred())
	var np netplan
	g.Expect(yaml.UnmarshalStrict(network, &np)).To(Succeed())
	e := np.Ethernets["id0"]
	g.Expect(e.Routes).To(Equal([]route{{To: "10.20.1.0/24", Via: "10.0.0.254", Metric: 100}, {To: "fd20::/48", Via: "fe80::1"}}))
	g.Expect(e.MTU).To(BeEquivalentTo(9000))
	g.Expect(e.Nameservers).To(Equal(&nameservers{Search: []string{"corp.example.com"}}))
	g.Expect(string(network)).To(And(ContainSubstring("metric: 100"), ContainSubstring("mtu: 9000"), ContainSubstring("search:"),
		Not(ContainSubstring("addresses: null"))))
}

// Values are data: a hostile hostname stays one YAML scalar.
func TestMetadataValuesStayData(t *testing.T) {
	g := NewWithT(t)
	md, err := BuildMetadata("uid", "x\nnetwork: evil", nil, false)
	g.Expect(err).NotTo(HaveOccurred())
	m, _ := decodeNetwork(g, md)
	g.Expect(m.LocalHostname).To(Equal("x\nnetwork: evil"))
	g.Expect(m.Network).To(BeEmpty())
}

func TestNeedsMAC(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NIC{DHCP4: true}.NeedsMAC()).To(BeFalse())
	g.Expect(NIC{DHCP4: true, Nameservers: []string{"1.1.1.1"}}.NeedsMAC()).To(BeTrue())
	g.Expect(NIC{Addresses: []string{"10.0.0.1/24"}}.NeedsMAC()).To(BeTrue())
	g.Expect(NIC{}.NeedsMAC()).To(BeTrue(), "a NIC without DHCP must be configured explicitly")
}

func TestMachineAddresses(t *testing.T) {
	g := NewWithT(t)
	got := MachineAddresses([]string{
		"10.0.0.21", "fe80::250:56ff:fe00:1", "127.0.0.1", "169.254.10.1", "::1", "10.0.0.21", "2001:db8::21", "not-an-ip", "::ffff:10.0.0.22",
	}, "win-md-0-abc")
	g.Expect(got).To(Equal([]clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: "10.0.0.21"},
		{Type: clusterv1.MachineInternalIP, Address: "2001:db8::21"},
		{Type: clusterv1.MachineInternalIP, Address: "10.0.0.22"},
		{Type: clusterv1.MachineHostName, Address: "win-md-0-abc"},
	}))
	g.Expect(MachineAddresses([]string{"fe80::1"}, "h")).To(BeEmpty(), "no hostname without an address")
}

func TestNormalizeMAC(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NormalizeMAC("00155D010203")).To(Equal("00:15:5d:01:02:03"))
	g.Expect(NormalizeMAC("00-15-5D-01-02-03")).To(Equal("00:15:5d:01:02:03"))
	g.Expect(NormalizeMAC("00:50:56:AA:BB:CC")).To(Equal("00:50:56:aa:bb:cc"))
}

func TestProviderID(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ProviderID("4232ABCD-0000-1111-2222-333344445555")).To(Equal("vsphere://4232abcd-0000-1111-2222-333344445555"))
	g.Expect(ProviderID("")).To(BeEmpty())
}
