package webhooks

import (
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// Defaults that the CRD also declares; the webhook makes them hold for objects stored before a
// default existed.
const (
	DefaultPauseImage  = "registry.k8s.io/pause:3.10"
	DefaultBinariesDir = `C:\k`
	DefaultVXLANVNI    = 4096
	DefaultVXLANPort   = 4789
)

// DefaultSpec fills every unset field that has a default. It is idempotent.
func DefaultSpec(spec *bootstrapv1.WindowsConfigSpec) {
	setIfEmpty(&spec.Format, bootstrapv1.FormatCloudConfig)
	setIfEmpty(&spec.NodeRegistration.CRISocket, bootstrapv1.DefaultCRISocket)
	setIfEmpty(&spec.Containerd.PauseImage, DefaultPauseImage)
	setIfEmpty(&spec.CNI.Plugin, bootstrapv1.CNICalico)
	setIfEmpty(&spec.CNI.VXLANVNI, DefaultVXLANVNI)
	setIfEmpty(&spec.CNI.VXLANPort, DefaultVXLANPort)
	setIfEmpty(&spec.Binaries.Source, bootstrapv1.BinariesPrebaked)
	setIfEmpty(&spec.Binaries.Directory, DefaultBinariesDir)
	if spec.ActiveDirectory != nil && noDomainJoin(spec.ActiveDirectory) {
		spec.ActiveDirectory = nil // {}: no domain join (what the templates pass by default)
	}
	if spec.DefenderExclusions == nil {
		spec.DefenderExclusions = ptr.To(true)
	}
}

func setIfEmpty[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}
