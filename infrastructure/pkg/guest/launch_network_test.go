package guest

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
)

// TestNewLaunchNetworkSettings: routes keep their metric, a DHCP adapter with an MTU or routes is
// configured too, and the search domains of all adapters become one list, each domain once.
func TestNewLaunchNetworkSettings(t *testing.T) {
	g := NewWithT(t)
	nics := []NIC{
		{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}, Gateway4: "10.0.0.1", MTU: 1400,
			Routes:        []Route{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}, {To: "fd20::/48", Via: "fe80::1"}},
			SearchDomains: []string{"corp.example.com", "example.com"}},
		{MAC: "00:50:56:00:00:02", DHCP4: true, MTU: 9000, SearchDomains: []string{"example.com", "lab.example.com"}},
		{MAC: "00:50:56:00:00:03", DHCP4: true},
	}
	l, err := NewLaunch("win", nics, vsphereStatus)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(l.Network).To(HaveLen(2), "the DHCP adapter with an MTU is configured, the plain DHCP one is not")
	g.Expect(l.Network[0].Routes).To(Equal([]LaunchRoute{
		{To: "0.0.0.0/0", Via: "10.0.0.1"}, {To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}, {To: "fd20::/48", Via: "fe80::1"}}))
	g.Expect(l.Network[0].MTU).To(BeEquivalentTo(1400))
	g.Expect(l.Network[1].MTU).To(BeEquivalentTo(9000))
	g.Expect(l.Network[1].Addresses).To(BeEmpty())
	g.Expect(l.SearchDomains).To(Equal([]string{"corp.example.com", "example.com", "lab.example.com"}))

	script, err := l.Script()
	g.Expect(err).NotTo(HaveOccurred())
	back, err := ParseLaunch(script)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.Network).To(Equal(l.Network))
	g.Expect(back.SearchDomains).To(Equal(l.SearchDomains))
}

func TestNewLaunchRejectsBadRoutes(t *testing.T) {
	for name, r := range map[string]Route{
		"to not CIDR":   {To: "10.20.0.0", Via: "10.0.0.254"},
		"via not IP":    {To: "10.20.0.0/16", Via: "router"},
		"other family":  {To: "10.20.0.0/16", Via: "fd00::1"},
		"no next hop":   {To: "10.20.0.0/16"},
		"script as via": {To: "10.20.0.0/16", Via: "$(Restart-Computer)"},
	} {
		nic := NIC{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}, Routes: []Route{r}}
		if _, err := NewLaunch("win", []NIC{nic}, vsphereStatus); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestBuildNetworkDocument: a cloudbase-init guest gets the launcher's network part when a NIC
// has what cloudbase-init leaves out (routes, an MTU, search domains), and nothing otherwise.
func TestBuildNetworkDocument(t *testing.T) {
	g := NewWithT(t)
	plain := []NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"}}}
	doc, err := BuildNetworkDocument(plain)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc).To(BeNil(), "cloudbase-init applies addresses, DNS servers and the default route")

	nics := append(plain, NIC{MAC: "00:50:56:00:00:02", DHCP4: true, MTU: 9000, SearchDomains: []string{"example.com"}})
	nics[0].Routes = []Route{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}}
	doc, err = BuildNetworkDocument(nics)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(doc)).To(MatchJSON(`{"version":1,"network":[
		{"mac":"00-50-56-00-00-01","addresses":["10.0.0.5/24"],"nameservers":["10.0.0.2"],"mtu":0,
		 "routes":[{"to":"0.0.0.0/0","via":"10.0.0.1","metric":0},{"to":"10.20.0.0/16","via":"10.0.0.254","metric":50}]},
		{"mac":"00-50-56-00-00-02","addresses":[],"routes":[],"nameservers":[],"mtu":9000}],
		"searchDomains":["example.com"]}`))
	l, err := NewLaunch("win", nics, vsphereStatus)
	g.Expect(err).NotTo(HaveOccurred())
	var back NetworkDocument
	g.Expect(json.Unmarshal(doc, &back)).To(Succeed())
	g.Expect(back.NetworkSettings).To(Equal(l.NetworkSettings), "the same network part as the launcher's")

	_, err = BuildNetworkDocument([]NIC{{MAC: "00:50:56:00:00:01", DHCP4: true, Routes: []Route{{To: "10.20.0.0/16", Via: "router"}}}})
	g.Expect(err).To(MatchError(ContainSubstring(`gateway "router" is not an IP address`)))
}
