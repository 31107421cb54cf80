package hypervsim

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// GuestNetwork is the network configuration the guest's launcher (launch.ps1, started through
// PowerShell Direct) left in the guest, as Get-NetIPAddress, Get-NetRoute, Get-DnsClientServerAddress,
// Get-NetIPInterface and Get-DnsClientGlobalSetting would show it.
type GuestNetwork struct {
	Adapters []GuestAdapter
	// SuffixSearchList is the computer's DNS suffix search list.
	SuffixSearchList []string
}

// GuestAdapter is one adapter's configuration, found by MAC (lower case, no separators).
type GuestAdapter struct {
	MAC        string
	Addresses  []string
	Routes     []guest.LaunchRoute // metric 0: New-NetRoute's default
	DNSServers []string
	// MTU4 and MTU6 are the IPv4 and IPv6 interfaces' NlMtuBytes; 0 is the image's.
	MTU4, MTU6 int32
}

// runLauncher does what launch.ps1's Set-Network does with the document of the launcher guest.ps1
// copied into vm, step by step and idempotently; an adapter the VM lacks fails the launcher,
// which reports it in its KVP status item as the script does.
func runLauncher(vm *VM, script []byte) {
	l, err := guest.ParseLaunch(script)
	if err != nil {
		return // not a launcher: nothing runs
	}
	for _, nic := range l.Network {
		a, i := vm.GuestNetwork.adapter(vm, nic.MAC)
		if i < 0 {
			report, _ := json.Marshal(map[string]string{"step": "launch", "state": "Failed",
				"message": fmt.Sprintf("no network adapter has the MAC address %s", nic.MAC), "logTail": ""})
			vm.KVP[l.Status.KVPValue] = string(report)
			return
		}
		a.apply(nic)
		adapters := slices.Clone(vm.GuestNetwork.Adapters) // copies handed out by VMs() stay as they were
		adapters[i] = a
		vm.GuestNetwork.Adapters = adapters
	}
	if len(l.SearchDomains) > 0 {
		vm.GuestNetwork.SuffixSearchList = slices.Clone(l.SearchDomains)
	}
}

// adapter returns the guest's adapter with the MAC and its index, adding it when the VM has a
// NIC with that MAC and the guest has not configured it yet; -1 when the VM has no such NIC.
func (n *GuestNetwork) adapter(vm *VM, mac string) (GuestAdapter, int) {
	mac = guest.NormalizeMAC(mac)
	for i, a := range n.Adapters {
		if a.MAC == mac {
			return a, i
		}
	}
	for _, nic := range vm.NICs {
		if guest.NormalizeMAC(nic.MAC) == mac {
			n.Adapters = append(slices.Clone(n.Adapters), GuestAdapter{MAC: mac})
			return GuestAdapter{MAC: mac}, len(n.Adapters) - 1
		}
	}
	return GuestAdapter{}, -1
}

// apply sets what launch.ps1 sets, leaving what is already there.
func (a *GuestAdapter) apply(nic guest.LaunchNIC) {
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
