package guestos

import _ "embed"

// Where the infrastructure provider delivers capwin's network document to a Windows guest that
// cloudbase-init configures (cloudbase-init applies only part of the netplan config: the IPv4 MTU
// and the first default route), and where the bootstrap script's network step looks for it. The
// document is the network part of the launcher's: {"version":1,"network":[...],"searchDomains":[...]}.
const (
	// NetworkGuestinfoKey holds the document as base64 on vSphere (read with
	// `vmtoolsd.exe --cmd "info-get guestinfo.capwin.network"`).
	NetworkGuestinfoKey = "guestinfo.capwin.network"
	// NetworkFile is the document as plain JSON on the Hyper-V config drive (its Joliet name).
	NetworkFile = "capwin-network.json"
	// ConfigDriveLabel is the volume label of the NoCloud config drive.
	ConfigDriveLabel = "cidata"
)

//go:embed ps/network.ps1
var networkScript string

// NetworkScript is the static PowerShell both the launcher and the bootstrap script start with:
// Set-Network (with Set-Routes and Set-Mtu) applies a network document, idempotently.
func NetworkScript() string { return networkScript }
