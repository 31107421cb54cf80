package guestos

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestNetworkScriptApplies reads the shared network script's syntax tree: routes are looked up
// before they are added (a second run adds nothing) and carry the document's metric, the MTU is
// set for both families, the search list is the document's, and each value comes from the
// document, never from a literal.
func TestNetworkScriptApplies(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	g := NewWithT(t)
	path := filepath.Join("ps", "network.ps1")
	results, err := pscheck.Files(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(results[0].Errors).To(BeEmpty(), results[0].String())
	calls, err := pscheck.Calls(path)
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
		{"Set-DnsClientGlobalSetting", "-SuffixSearchList", "$Config.searchDomains"},
	} {
		_, i := pscheck.Find(calls, in("Set-Network", want[0], want[1:]...))
		g.Expect(i).NotTo(Equal(-1), "Set-Network calls %v", want)
	}
	for _, c := range calls {
		g.Expect(c.Function).NotTo(BeEmpty(), "the shared script only defines functions; %s runs at top level", c.Name)
	}
	for i, c := range NetworkScript() {
		g.Expect(c).To(BeNumerically("<=", 127), "non-ASCII character at %d: Windows PowerShell 5.1 reads BOM-less files as ANSI", i)
	}
	g.Expect(strings.HasSuffix(NetworkScript(), "\n")).To(BeTrue(), "the including script continues on a new line")
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
