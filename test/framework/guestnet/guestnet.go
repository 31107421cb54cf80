// Package guestnet is a simulated Windows guest's network configuration as Set-Network
// (internal/guestos/ps/network.ps1) leaves it. The Hyper-V host simulator applies the launcher's
// document with it, the simulated guest its bootstrap's network step: one model for the one script.
package guestnet

import (
	"fmt"
	"slices"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// Network is what Get-NetIPAddress, Get-NetRoute, Get-DnsClientServerAddress, Get-NetIPInterface
// and Get-DnsClientGlobalSetting would show.
type Network struct {
	Adapters []Adapter
	// SuffixSearchList is the computer's DNS suffix search list.
	SuffixSearchList []string
}

// Adapter is one adapter's configuration, found by MAC (lower case, no separators).
type Adapter struct {
	MAC        string
	Addresses  []string
	Routes     []guest.LaunchRoute // metric 0: New-NetRoute's default
	DNSServers []string
	// MTU4 and MTU6 are the IPv4 and IPv6 interfaces' NlMtuBytes; 0 is the image's.
	MTU4, MTU6 int32
}

// Apply does what Set-Network does with a document's network part, adapter by adapter and
// idempotently. hasMAC says whether the guest has an adapter (nil: every adapter is there); the
// first one it lacks fails Apply with the script's words, after the adapters before it were set.
// Slices are replaced, never changed in place, so copies handed out stay as they were.
func (n *Network) Apply(s guest.NetworkSettings, hasMAC func(mac string) bool) error {
	for _, nic := range s.Network {
		mac := guest.NormalizeMAC(nic.MAC)
		i := slices.IndexFunc(n.Adapters, func(a Adapter) bool { return a.MAC == mac })
		if i < 0 {
			if hasMAC != nil && !hasMAC(mac) {
				return fmt.Errorf("no network adapter has the MAC address %s", nic.MAC)
			}
			n.Adapters, i = append(slices.Clone(n.Adapters), Adapter{MAC: mac}), len(n.Adapters)
		}
		a := n.Adapters[i]
		a.apply(nic)
		n.Adapters = slices.Clone(n.Adapters)
		n.Adapters[i] = a
	}
	if len(s.SearchDomains) > 0 {
		n.SuffixSearchList = slices.Clone(s.SearchDomains)
	}
	return nil
}

// apply sets what Set-Network sets, leaving what is already there.
func (a *Adapter) apply(nic guest.LaunchNIC) {
	a.Addresses = slices.Clone(a.Addresses)
	for _, cidr := range nic.Addresses {
		if !slices.Contains(a.Addresses, cidr) {
			a.Addresses = append(a.Addresses, cidr)
		}
	}
	a.Routes = slices.Clone(a.Routes)
	for _, r := range nic.Routes {
		i := slices.IndexFunc(a.Routes, func(have guest.LaunchRoute) bool { return have.To == r.To && have.Via == r.Via })
		switch {
		case i < 0:
			a.Routes = append(a.Routes, r)
		case r.Metric > 0:
			a.Routes[i].Metric = r.Metric
		}
	}
	if len(nic.Nameservers) > 0 {
		a.DNSServers = slices.Clone(nic.Nameservers)
	}
	if nic.MTU > 0 {
		a.MTU4 = nic.MTU
		if nic.MTU >= 1280 { // IPv6 is bound to every adapter of a Windows image
			a.MTU6 = nic.MTU
		}
	}
}
