package guest

import (
	"encoding/base64"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"
)

// FuzzMachineAddresses: addresses reported by a guest become unique, canonical InternalIPs of
// usable addresses only (never a panic on what the guest sends), and a MAC normalises once.
func FuzzMachineAddresses(f *testing.F) {
	f.Add("10.0.0.21", " 2001:db8::21 ", "::ffff:10.0.0.21", "00155D010203", "win-md-0-abc")
	f.Add("fe80::1", "127.0.0.1", "ff02::1", "00-15-5D-01-02-03", "")
	f.Add("", "1.2.3", "fe80::1%eth0", "00:50:56:AA:BB:CC", "h")
	f.Fuzz(func(t *testing.T, ip1, ip2, ip3, mac, hostname string) {
		out := MachineAddresses([]string{ip1, ip2, ip3}, hostname)
		seen := map[string]bool{}
		for i, a := range out {
			if a.Type == clusterv1.MachineHostName {
				if i != len(out)-1 || a.Address != hostname || i == 0 {
					t.Fatalf("hostname entry misplaced in %+v", out)
				}
				continue
			}
			p, err := netip.ParseAddr(a.Address)
			if err != nil || p.String() != a.Address || !Usable(a.Address) || seen[a.Address] {
				t.Fatalf("address %q in %+v is not a unique canonical usable IP", a.Address, out)
			}
			seen[a.Address] = true
		}
		if n := NormalizeMAC(mac); utf8.ValidString(mac) && NormalizeMAC(n) != n {
			t.Fatalf("NormalizeMAC(%q) = %q is not stable: %q", mac, n, NormalizeMAC(n))
		}
	})
}

// FuzzBuildMetadata: the addresses, gateways, name servers, routes, MTU and search domains of a
// VCenterMachine/HyperVMachine network spec either get a clear error or a metadata document whose
// network config reads back with the same values.
func FuzzBuildMetadata(f *testing.F) {
	f.Add("uid-1", "win-md-0-abc", "00:50:56:aa:bb:cc", "10.0.0.21/24", "10.0.0.1", "fd00::1", "10.0.0.2", false, "10.20.0.0/16", "10.0.0.254", int32(50), int32(1400), "corp.example.com")
	f.Add("uid-2", "ubuntu", "00:15:5d:01:02:03", "2001:db8::21/64", "", "2001:db8::1", "2001:db8::53", true, "fd20::/48", "fe80::1", int32(0), int32(9000), "")
	f.Add("x: y", "'\n- a", "MAC", "10.0.0.21", "gw", "", "'; exit #", false, "10.20.0.1/16", "fd00::1", int32(-1), int32(0), "a\nb: c")
	f.Fuzz(func(t *testing.T, instanceID, hostname, mac, addr, gw4, gw6, dns string, linux bool, to, via string, metric, mtu int32, search string) {
		for _, s := range []string{instanceID, hostname, mac, addr, gw4, gw6, dns, to, via, search} {
			if !utf8.ValidString(s) {
				return // API strings are UTF-8; the hostname is a sanitised computer name
			}
		}
		nic := NIC{MAC: mac, Addresses: []string{addr}, Gateway4: gw4, Gateway6: gw6, Nameservers: []string{dns},
			Routes: []Route{{To: to, Via: via, Metric: metric}}, MTU: mtu, SearchDomains: []string{search}}
		raw, err := BuildMetadata(instanceID, hostname, []NIC{nic}, linux)
		if err != nil {
			return
		}
		var md Metadata
		if err := yaml.UnmarshalStrict(raw, &md); err != nil || md.InstanceID != instanceID || md.LocalHostname != hostname {
			t.Fatalf("metadata reads back as %+v, %v", md, err)
		}
		network, err := base64.StdEncoding.DecodeString(md.Network)
		if err != nil {
			t.Fatal(err)
		}
		var np netplan
		if err := yaml.UnmarshalStrict(network, &np); err != nil {
			t.Fatalf("network config does not read back: %v\n%s", err, network)
		}
		e := np.Ethernets["id0"]
		if e.Match.MACAddress != strings.ToLower(mac) || len(e.Addresses) != 1 || e.Addresses[0] != netip.MustParsePrefix(addr).String() ||
			e.Nameservers == nil || e.Nameservers.Addresses[0] != dns || e.Nameservers.Search[0] != search || e.MTU != mtu {
			t.Fatalf("network config reads back as %+v", e)
		}
		last := e.Routes[len(e.Routes)-1]
		if last.To != netip.MustParsePrefix(to).Masked().String() || last.Via != netip.MustParseAddr(via).String() || last.Metric != metric {
			t.Fatalf("route %+v reads back as %+v", nic.Routes[0], last)
		}
	})
}
