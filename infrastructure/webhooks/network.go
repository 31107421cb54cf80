package webhooks

import (
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// minIPv6MTU is the smallest MTU IPv6 allows (RFC 8200); Windows refuses a smaller one.
const minIPv6MTU = 1280

// validateNextHops checks that the device can reach its gateways and the next hops of its routes.
func validateNextHops(d infrav1.NetworkDevice, path *field.Path) field.ErrorList {
	errs := validateNextHop(d, path.Child("gateway4"), d.Gateway4)
	errs = append(errs, validateNextHop(d, path.Child("gateway6"), d.Gateway6)...)
	for i, r := range d.Routes {
		errs = append(errs, validateNextHop(d, path.Child("routes").Index(i).Child("via"), r.Via)...)
	}
	return errs
}

// validateNextHop checks that hop (a gateway or a route's via) is in the subnet of one of the
// device's static addresses of its family and is not one of them. IPv6 link-local next hops are
// on every IPv6 link. When the device gets that family's address by DHCP or from a pool, the
// subnet is unknown at admission and hop is not checked.
func validateNextHop(d infrav1.NetworkDevice, at *field.Path, value string) field.ErrorList {
	hop, err := netip.ParseAddr(value)
	if err != nil || hop.Is6() && hop.IsLinkLocalUnicast() {
		return nil // unset; a malformed address is rejected by the CRD's CEL rule
	}
	family, dhcp, dhcpField := "IPv4", d.DHCP4, "dhcp4"
	if hop.Is6() {
		family, dhcp, dhcpField = "IPv6", d.DHCP6, "dhcp6"
	}
	var subnets []netip.Prefix
	for _, a := range d.IPAddrs {
		if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is6() == hop.Is6() {
			subnets = append(subnets, p)
		}
	}
	switch {
	case len(subnets) == 0 && !dhcp && len(d.AddressesFromPools) == 0:
		return field.ErrorList{field.Invalid(at, value, fmt.Sprintf(
			"the device has no %s address: add a static %s address to ipAddrs, a pool to addressesFromPools, or set %s",
			family, family, dhcpField))}
	case len(subnets) == 0 || len(d.AddressesFromPools) > 0:
		// A lease's or a pool's address is unknown until the VM runs or the claim is bound.
		return nil
	}
	var cidrs []string
	for _, p := range subnets {
		if p.Addr() == hop {
			return field.ErrorList{field.Invalid(at, value, fmt.Sprintf("is the device's own address %s", p))}
		}
		if p.Contains(hop) {
			return nil
		}
		cidrs = append(cidrs, p.Masked().String())
	}
	return field.ErrorList{field.Invalid(at, value, fmt.Sprintf(
		"is not in the subnet of any static %s address of the device (%s): the VM could not reach it", family, strings.Join(cidrs, ", ")))}
}

// validateOptions checks routes, MTU and search domains beyond the schema. Every guest applies
// them: cloud-init from the netplan config, a Windows guest through capwin's network document
// (the launcher with guestCredentialsRef, else the bootstrap's network step).
func validateOptions(d infrav1.NetworkDevice, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[[2]string]int{}
	for i, r := range d.Routes {
		at := path.Child("routes").Index(i)
		if to, err := netip.ParsePrefix(r.To); err == nil && to.Bits() == 0 && (to.Addr().Is4() && d.Gateway4 != "" || to.Addr().Is6() && d.Gateway6 != "") {
			errs = append(errs, field.Invalid(at.Child("to"), r.To, "is a default route, and the device's gateway already is one: use either"))
		}
		key := [2]string{r.To, r.Via}
		if j, ok := seen[key]; ok {
			errs = append(errs, duplicate(at, key, fmt.Sprintf("same destination and next hop as %s", path.Child("routes").Index(j))))
		}
		seen[key] = i
	}
	if d.MTU != nil && *d.MTU < minIPv6MTU && hasIPv6(d) {
		errs = append(errs, field.Invalid(path.Child("mtu"), *d.MTU, fmt.Sprintf("the device has IPv6, which needs an MTU of at least %d", minIPv6MTU)))
	}
	domains := map[string]int{}
	for i, s := range d.SearchDomains {
		if j, ok := domains[s]; ok {
			errs = append(errs, duplicate(path.Child("searchDomains").Index(i), s, fmt.Sprintf("same as %s", path.Child("searchDomains").Index(j))))
		}
		domains[s] = i
	}
	return errs
}

// hasIPv6 reports whether the device is configured with IPv6: DHCPv6 or a static IPv6 address.
func hasIPv6(d infrav1.NetworkDevice) bool {
	if d.DHCP6 || d.Gateway6 != "" {
		return true
	}
	for _, a := range d.IPAddrs {
		if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is6() {
			return true
		}
	}
	return false
}
