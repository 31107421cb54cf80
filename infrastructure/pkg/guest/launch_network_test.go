package guest

import (
	"path/filepath"
	"slices"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/test/pscheck"
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

// TestLaunchAppliesNetworkSettings reads the static launcher's syntax tree: routes are looked up
// before they are added (a second run adds nothing) and carry the document's metric, the MTU is
// set for both families, the search list is the document's, and each value comes from the
// document, never from a literal.
func TestLaunchAppliesNetworkSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	g := NewWithT(t)
	calls, err := pscheck.Calls(filepath.Join("ps", "launch.ps1"))
	g.Expect(err).NotTo(HaveOccurred())
	in := func(function, name string, args ...string) func(pscheck.Call) bool {
		return func(c pscheck.Call) bool {
			return c.Function == function && c.Name == name && hasArgs(c.Args, args...)
		}
	}
	route := []string{"-InterfaceIndex", "$Index", "-DestinationPrefix", "$route.to", "-NextHop", "$route.via"}
	_, lookup := pscheck.Find(calls, in("Set-Routes", "Get-NetRoute", route...))
	_, add := pscheck.Find(calls, in("Set-Routes", "New-NetRoute", append(route, "-RouteMetric", "$route.metric")...))
	_, addDefault := pscheck.Find(calls, func(c pscheck.Call) bool {
		return in("Set-Routes", "New-NetRoute", route...)(c) && !slices.Contains(c.Args, "-RouteMetric")
	})
	_, fix := pscheck.Find(calls, in("Set-Routes", "Set-NetRoute", append(route, "-RouteMetric", "$route.metric")...))
	g.Expect([]int{lookup, add, addDefault, fix}).NotTo(ContainElement(-1), "Get-NetRoute, New-NetRoute (with and without metric), Set-NetRoute")
	g.Expect(lookup).To(BeNumerically("<", add), "a route is looked up before it is added")

	for _, family := range []string{"IPv4", "IPv6"} {
		_, i := pscheck.Find(calls, in("Set-Mtu", "Set-NetIPInterface", "-InterfaceIndex", "$Index", "-AddressFamily", family, "-NlMtuBytes", "$Mtu"))
		g.Expect(i).NotTo(Equal(-1), "Set-NetIPInterface -NlMtuBytes for %s", family)
	}
	for _, want := range [][]string{
		{"Set-Routes", "-Index", "$index", "-Routes", "$nic.routes"},
		{"Set-Mtu", "-Index", "$index", "-Mtu", "$nic.mtu"},
		{"Set-DnsClientGlobalSetting", "-SuffixSearchList", "$Launch.searchDomains"},
	} {
		_, i := pscheck.Find(calls, in("Set-Network", want[0], want[1:]...))
		g.Expect(i).NotTo(Equal(-1), "Set-Network calls %v", want)
	}
}

// hasArgs reports whether every flag of want (a flag followed by its value) is in args with that value.
func hasArgs(args []string, want ...string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		j := slices.Index(args, want[i])
		if j < 0 || j+1 >= len(args) || args[j+1] != want[i+1] {
			return false
		}
	}
	return true
}
