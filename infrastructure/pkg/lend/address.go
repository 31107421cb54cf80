package lend

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// dnsName is a lower-case DNS name of one or more labels.
var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// AddressProblem says why an identity's hosts[].addresses entry is not a DNS name, a *.suffix
// wildcard, an IP address or a CIDR range; "" when it is one.
func AddressProblem(entry string) string {
	if strings.Contains(entry, "/") {
		if _, err := netip.ParsePrefix(entry); err != nil {
			return fmt.Sprintf("%q is not a CIDR range: %v", entry, err)
		}
		return ""
	}
	if _, err := netip.ParseAddr(entry); err == nil {
		return ""
	}
	name := strings.TrimPrefix(entry, "*.")
	if !dnsName.MatchString(name) {
		return fmt.Sprintf("%q is neither an IP address, a CIDR range, a lower-case DNS name nor *. and one", entry)
	}
	return ""
}

// addressIn reports whether a host address, as a HyperVCluster writes it, is one the entries
// name: an IP address equal to, or within, an IP or CIDR entry; a DNS name equal to a name entry
// (without regard to case or a final dot) or below a *.suffix entry. A name never matches an IP
// entry nor an IP a name: capwin does not resolve names to decide.
func addressIn(address string, entries []string) bool {
	ip, err := netip.ParseAddr(address)
	isIP := err == nil
	name := strings.TrimSuffix(strings.ToLower(address), ".")
	for _, e := range entries {
		if AddressProblem(e) != "" {
			continue
		}
		switch {
		case strings.Contains(e, "/"):
			p, _ := netip.ParsePrefix(e)
			if isIP && p.Contains(ip.Unmap()) {
				return true
			}
		case isIP:
			if a, err := netip.ParseAddr(e); err == nil && a.Unmap() == ip.Unmap() {
				return true
			}
		case strings.HasPrefix(e, "*."):
			suffix := e[1:] // .example.com
			if strings.HasSuffix(name, suffix) && len(name) > len(suffix) && dnsName.MatchString(name) {
				return true
			}
		case name == e:
			return true
		}
	}
	return false
}
