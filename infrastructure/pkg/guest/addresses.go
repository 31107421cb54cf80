package guest

import (
	"net/netip"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Usable reports whether an address the guest reports may be a node address: not loopback,
// link-local, multicast or unspecified.
func Usable(ip string) bool {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return false
	}
	return !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsMulticast() && !a.IsUnspecified() &&
		!a.IsInterfaceLocalMulticast() && !a.IsLinkLocalMulticast()
}

// MachineAddresses turns the usable addresses of the VM's own NICs (in NIC order) into InternalIP
// entries, without duplicates, followed by the hostname.
func MachineAddresses(ips []string, hostname string) []clusterv1.MachineAddress {
	var out []clusterv1.MachineAddress
	seen := map[netip.Addr]bool{}
	for _, ip := range ips {
		if !Usable(ip) {
			continue
		}
		a := netip.MustParseAddr(strings.TrimSpace(ip)).Unmap()
		if seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: a.String()})
	}
	if len(out) > 0 && hostname != "" {
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: hostname})
	}
	return out
}

// NormalizeMAC lowercases a MAC and uses ':' separators (Hyper-V reports 00155D010203).
func NormalizeMAC(mac string) string {
	m := strings.ToLower(strings.NewReplacer("-", "", ":", "", ".", "").Replace(mac))
	if len(m) != 12 {
		return strings.ToLower(mac)
	}
	var b strings.Builder
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(m[i : i+2])
	}
	return b.String()
}
