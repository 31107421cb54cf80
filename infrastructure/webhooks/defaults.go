package webhooks

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// DefaultGuestSoftPowerOffTimeout is how long powerOffMode trySoft waits for the guest.
const DefaultGuestSoftPowerOffTimeout = 5 * time.Minute

// DefaultMachineSpec fills every unset field that has a default. It is idempotent. The CRD
// declares the enum defaults too; the webhook makes them hold for objects stored before a default
// existed, and adds the timeout, which depends on powerOffMode and so cannot be a schema default.
func DefaultMachineSpec(spec *infrav1.VCenterMachineSpec) {
	setIfEmpty(&spec.CloneMode, infrav1.FullClone)
	setIfEmpty(&spec.OS, infrav1.OSWindows)
	setIfEmpty(&spec.PowerOffMode, infrav1.PowerOffHard)
	for i := range spec.DataDisks {
		setIfEmpty(&spec.DataDisks[i].Provisioning, infrav1.DiskThin)
	}
	if spec.PowerOffMode == infrav1.PowerOffTrySoft && spec.GuestSoftPowerOffTimeout == nil {
		spec.GuestSoftPowerOffTimeout = &metav1.Duration{Duration: DefaultGuestSoftPowerOffTimeout}
	}
}

func setIfEmpty[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}
