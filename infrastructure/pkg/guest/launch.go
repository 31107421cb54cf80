package guest

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/capwin/capwin/internal/guestos"
)

// Where capwin puts the bootstrap data in a guest it starts through the guest agent.
const (
	GuestDir           = `C:\ProgramData\capwin`
	GuestLaunchPath    = GuestDir + `\launch.ps1`
	GuestBootstrapPath = GuestDir + `\bootstrap.ps1`
	GuestLaunchLog     = GuestDir + `\launch.log`
	// GuestPowerShell is Windows PowerShell 5.1, present on every Windows Server.
	GuestPowerShell = `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`
	// GuestLaunchArgs are the arguments that start the launcher.
	GuestLaunchArgs = `-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "` + GuestLaunchPath + `"`
	// KVPKey is the registry key whose values Hyper-V shows the host as KVP guest items.
	KVPKey = `HKLM:\SOFTWARE\Microsoft\Virtual Machine\Guest`
	// bootstrapTask is the startup task the bootstrap script itself uses and removes when done.
	bootstrapTask = "capwin-bootstrap"
)

//go:embed ps/launch.ps1
var launchBody string

// launchScript is the static launcher: the shared network functions, then launch.ps1.
var launchScript = guestos.NetworkScript() + launchBody

// LaunchScript is the static launcher (for syntax checks and the simulated guest).
func LaunchScript() string { return launchScript }

// Launch is the launcher's data document. Every field is always present (the script runs in
// strict mode): lists are empty, never null.
type Launch struct {
	Version       int          `json:"version"`
	ComputerName  string       `json:"computerName"`
	BootstrapPath string       `json:"bootstrapPath"`
	LogFile       string       `json:"logFile"`
	TaskName      string       `json:"taskName"`
	Status        LaunchStatus `json:"status"`
	NetworkSettings
}

// NetworkSettings are the network part of the launcher's document, read by Set-Network
// (internal/guestos/ps/network.ps1).
type NetworkSettings struct {
	Network []LaunchNIC `json:"network"`
	// SearchDomains is the guest's DNS suffix search list: the search domains of every NIC, in
	// NIC order, once each. Windows keeps one list for the whole computer (a NIC holds only one
	// connection-specific suffix); empty leaves the guest's list alone.
	SearchDomains []string `json:"searchDomains"`
}

// LaunchStatus says where the launcher reports a failure: the guestinfo key (vSphere) or the
// KVP registry item (Hyper-V); empty fields are skipped.
type LaunchStatus struct {
	GuestinfoKey string `json:"guestinfoKey"`
	KVPKey       string `json:"kvpKey"`
	KVPValue     string `json:"kvpValue"`
}

// LaunchNIC is the static configuration of one adapter, found by MAC.
type LaunchNIC struct {
	// MAC in Windows' form (00-50-56-AB-CD-EF), as Get-NetAdapter shows it.
	MAC         string        `json:"mac"`
	Addresses   []string      `json:"addresses"`
	Routes      []LaunchRoute `json:"routes"`
	Nameservers []string      `json:"nameservers"`
	// MTU in bytes for IPv4, and for IPv6 when at least 1280 (IPv6's minimum); 0 keeps the guest's.
	MTU int32 `json:"mtu"`
}

// LaunchRoute is a route of a LaunchNIC; Metric 0 leaves New-NetRoute's default.
type LaunchRoute struct {
	To     string `json:"to"`
	Via    string `json:"via"`
	Metric int32  `json:"metric"`
}

// NewLaunch builds the launcher document for a guest: its computer name and the static part of
// its NICs (DHCP-only adapters are left alone).
func NewLaunch(computerName string, nics []NIC, status LaunchStatus) (Launch, error) {
	l := Launch{Version: 1, ComputerName: computerName, BootstrapPath: GuestBootstrapPath, LogFile: GuestLaunchLog,
		TaskName: bootstrapTask, Status: status, NetworkSettings: NetworkSettings{Network: []LaunchNIC{}, SearchDomains: []string{}}}
	if len(computerName) > MaxComputerName || sanitize(computerName) != strings.ToLower(computerName) || computerName == "" || allDigits(computerName) {
		return l, fmt.Errorf("computer name %q is not a Windows computer name (1 to %d letters, digits and inner hyphens, not only digits)",
			computerName, MaxComputerName)
	}
	n, err := newNetworkSettings(nics)
	if err != nil {
		return l, err
	}
	l.NetworkSettings = n
	return l, nil
}

// newNetworkSettings is the static part of the NICs (DHCP-only adapters are left alone) and the
// search domains of all of them; lists are empty, never null (the scripts run in strict mode).
func newNetworkSettings(nics []NIC) (NetworkSettings, error) {
	out := NetworkSettings{Network: []LaunchNIC{}, SearchDomains: []string{}}
	for i, n := range nics {
		if !n.NeedsMAC() {
			continue
		}
		e, err := toEthernet(n)
		if err != nil {
			return out, fmt.Errorf("network device %d: %w", i, err)
		}
		ln := LaunchNIC{MAC: strings.ToUpper(strings.ReplaceAll(e.Match.MACAddress, ":", "-")),
			Addresses: append([]string{}, e.Addresses...), Routes: []LaunchRoute{}, Nameservers: []string{}, MTU: e.MTU}
		for _, r := range e.Routes {
			ln.Routes = append(ln.Routes, LaunchRoute(r))
		}
		for _, d := range n.SearchDomains {
			if !slices.Contains(out.SearchDomains, d) {
				out.SearchDomains = append(out.SearchDomains, d)
			}
		}
		if e.Nameservers != nil {
			for _, a := range e.Nameservers.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil {
					return out, fmt.Errorf("network device %d: nameserver %q is not an IP address", i, a)
				}
				ln.Nameservers = append(ln.Nameservers, ip.String())
			}
		}
		out.Network = append(out.Network, ln)
	}
	return out, nil
}

// Script renders the launcher: one line assigning the document as base64, then the static script.
func (l Launch) Script() ([]byte, error) { return render("CapwinLaunch", l, launchScript) }

// ParseLaunch reads the document back from a rendered launcher (the simulated guest, tests).
func ParseLaunch(script []byte) (Launch, error) {
	var l Launch
	return l, parse(script, "CapwinLaunch", "launcher", &l)
}

// render is a static script with its data document: a first line assigning the JSON document as
// base64 to the variable, then the script.
func render(variable string, doc any, script string) ([]byte, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return []byte("$" + variable + " = '" + base64.StdEncoding.EncodeToString(data) + "'\r\n" + script), nil
}

// parse reads the data document of a script render made back into doc.
func parse(script []byte, variable, what string, doc any) error {
	first, _, ok := strings.Cut(string(script), "\r\n")
	raw, found := strings.CutPrefix(first, "$"+variable+" = '")
	if !ok || !found || !strings.HasSuffix(raw, "'") {
		return fmt.Errorf("not a capwin %s", what)
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(raw, "'"))
	if err != nil {
		return fmt.Errorf("%s document: %w", what, err)
	}
	return json.Unmarshal(data, doc)
}

// WithMACs fills the MACs read from the VM into NICs that have none (device order).
func WithMACs(nics []NIC, macs []string) []NIC {
	out := append([]NIC(nil), nics...)
	for i := range out {
		if out[i].MAC == "" && i < len(macs) {
			out[i].MAC = macs[i]
		}
	}
	return out
}
