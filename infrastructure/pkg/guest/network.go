package guest

import (
	"encoding/json"
	"slices"
)

// NetworkDocument is what a cloudbase-init Windows guest gets beside its metadata
// (guestos.NetworkGuestinfoKey on vSphere, guestos.NetworkFile on the Hyper-V config drive): the
// launcher's network part, which the bootstrap script's network step applies with the launcher's
// own Set-Network.
type NetworkDocument struct {
	Version int `json:"version"`
	NetworkSettings
}

// BuildNetworkDocument renders the network document of a Windows guest's NICs (MACs filled in),
// or nil when no NIC has routes, an MTU or search domains: cloudbase-init applies the rest of the
// netplan config itself (addresses, DNS servers, the default route), but of these only the IPv4
// MTU. The document is delivered whether or not the guest also runs the launcher: a second
// application changes nothing.
func BuildNetworkDocument(nics []NIC) ([]byte, error) {
	if !slices.ContainsFunc(nics, func(n NIC) bool { return len(n.Routes) > 0 || n.MTU != 0 || len(n.SearchDomains) > 0 }) {
		return nil, nil
	}
	n, err := newNetworkSettings(nics)
	if err != nil {
		return nil, err
	}
	return json.Marshal(NetworkDocument{Version: 1, NetworkSettings: n})
}
