package guest

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"strings"

	"sigs.k8s.io/yaml"
)

// NIC is one VM network adapter as the guest will see it, with the addresses resolved from the
// spec and from IPAM.
type NIC struct {
	// MAC of the adapter, as the hypervisor assigned it; the netplan config matches on it.
	MAC         string
	DHCP4       bool
	DHCP6       bool
	Addresses   []string // CIDR
	Gateway4    string
	Gateway6    string
	Nameservers []string
	// Routes are static routes beyond the default ones of Gateway4 and Gateway6.
	Routes []Route
	// MTU in bytes; 0 keeps the guest's.
	MTU           int32
	SearchDomains []string
}

// Route is a static route; Metric 0 leaves the guest's default.
type Route struct {
	To, Via string
	Metric  int32
}

// Metadata is the cloud-init/cloudbase-init instance metadata document.
type Metadata struct {
	InstanceID    string `json:"instance-id"`
	LocalHostname string `json:"local-hostname"`
	// Network is netplan v2, base64 encoded as both cloudbase-init (>= 1.1.5) and cloud-init's
	// VMware datasource read it.
	Network         string `json:"network,omitempty"`
	NetworkEncoding string `json:"network.encoding,omitempty"`
}

// netplan v2 shapes, typed so values are always marshalled, never spliced.
type netplan struct {
	Version   int                 `json:"version"`
	Ethernets map[string]ethernet `json:"ethernets"`
}

type ethernet struct {
	Match       match        `json:"match"`
	SetName     string       `json:"set-name,omitempty"`
	DHCP4       bool         `json:"dhcp4"`
	DHCP6       bool         `json:"dhcp6"`
	Addresses   []string     `json:"addresses,omitempty"`
	Routes      []route      `json:"routes,omitempty"`
	Nameservers *nameservers `json:"nameservers,omitempty"`
	MTU         int32        `json:"mtu,omitempty"`
}

type match struct {
	MACAddress string `json:"macaddress"`
}

type route struct {
	To     string `json:"to"`
	Via    string `json:"via"`
	Metric int32  `json:"metric,omitempty"`
}

type nameservers struct {
	Addresses []string `json:"addresses,omitempty"`
	Search    []string `json:"search,omitempty"`
}

// BuildMetadata renders the metadata YAML. Every NIC needs its MAC: adapters are matched by MAC,
// the only name Windows and Linux guests share. Linux guests get eth0, eth1 ... as names.
func BuildMetadata(instanceID, hostname string, nics []NIC, linux bool) ([]byte, error) {
	if instanceID == "" || hostname == "" {
		return nil, fmt.Errorf("metadata needs an instance id and a hostname")
	}
	md := Metadata{InstanceID: instanceID, LocalHostname: hostname}
	raw, err := networkConfig(nics, linux)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		md.Network, md.NetworkEncoding = base64.StdEncoding.EncodeToString(raw), "base64"
	}
	return yaml.Marshal(md)
}

// BuildNoCloud renders the NoCloud config drive files meta-data and network-config (netplan v2,
// nil when no NIC needs configuration).
func BuildNoCloud(instanceID, hostname string, nics []NIC, linux bool) (metaData, network []byte, err error) {
	if instanceID == "" || hostname == "" {
		return nil, nil, fmt.Errorf("metadata needs an instance id and a hostname")
	}
	if network, err = networkConfig(nics, linux); err != nil {
		return nil, nil, err
	}
	metaData, err = yaml.Marshal(Metadata{InstanceID: instanceID, LocalHostname: hostname})
	return metaData, network, err
}

// networkConfig is the netplan v2 document of the NICs, nil without NICs.
func networkConfig(nics []NIC, linux bool) ([]byte, error) {
	if len(nics) == 0 {
		return nil, nil
	}
	np := netplan{Version: 2, Ethernets: map[string]ethernet{}}
	for i, n := range nics {
		e, err := toEthernet(n)
		if err != nil {
			return nil, fmt.Errorf("network device %d: %w", i, err)
		}
		if linux {
			e.SetName = fmt.Sprintf("eth%d", i)
		}
		np.Ethernets[fmt.Sprintf("id%d", i)] = e
	}
	return yaml.Marshal(np)
}

func toEthernet(n NIC) (ethernet, error) {
	if n.MAC == "" {
		return ethernet{}, fmt.Errorf("no MAC address")
	}
	e := ethernet{Match: match{MACAddress: strings.ToLower(n.MAC)}, DHCP4: n.DHCP4, DHCP6: n.DHCP6}
	for _, a := range n.Addresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return ethernet{}, fmt.Errorf("address %q is not in CIDR form", a)
		}
		e.Addresses = append(e.Addresses, p.String())
	}
	var routes []Route
	for _, gw := range []Route{{To: "0.0.0.0/0", Via: n.Gateway4}, {To: "::/0", Via: n.Gateway6}} {
		if gw.Via != "" {
			routes = append(routes, gw)
		}
	}
	for _, r := range append(routes, n.Routes...) {
		checked, err := checkRoute(r)
		if err != nil {
			return ethernet{}, err
		}
		e.Routes = append(e.Routes, checked)
	}
	if len(n.Nameservers) > 0 || len(n.SearchDomains) > 0 {
		e.Nameservers = &nameservers{Addresses: n.Nameservers, Search: n.SearchDomains}
	}
	e.MTU = n.MTU
	return e, nil
}

// checkRoute returns r in netplan's form, or why it is not a route: to must be a network in
// CIDR form and via an address of its family.
func checkRoute(r Route) (route, error) {
	to, err := netip.ParsePrefix(r.To)
	if err != nil {
		return route{}, fmt.Errorf("route destination %q is not in CIDR form", r.To)
	}
	via, err := netip.ParseAddr(r.Via)
	if err != nil {
		return route{}, fmt.Errorf("gateway %q is not an IP address", r.Via)
	}
	if via.Is4() != to.Addr().Is4() {
		return route{}, fmt.Errorf("route to %s: next hop %s is of another address family", r.To, r.Via)
	}
	return route{To: to.Masked().String(), Via: via.String(), Metric: r.Metric}, nil
}

// NeedsMAC reports whether a NIC's configuration can only be written once its MAC is known, that
// is whether it has anything beyond DHCP defaults.
func (n NIC) NeedsMAC() bool {
	return len(n.Addresses) > 0 || n.Gateway4 != "" || n.Gateway6 != "" || len(n.Nameservers) > 0 || !n.DHCP4 && !n.DHCP6 ||
		len(n.Routes) > 0 || n.MTU != 0 || len(n.SearchDomains) > 0
}
