package webhooks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// Defaults of a HyperVMachineSpec (the CRD declares them too).
const (
	DefaultHyperVProcessors    = 2
	DefaultHyperVMemoryMiB     = 4096
	DefaultHyperVBufferPercent = 20
)

// DefaultHyperVMachineSpec fills every unset field that has a default. It is idempotent. Besides
// the CRD's defaults (kept for objects stored before a default existed) it spells out Secure
// Boot, whose template depends on os, and the trySoft timeout, which depends on powerOffMode.
func DefaultHyperVMachineSpec(spec *infrav1.HyperVMachineSpec) {
	setIfEmpty(&spec.OS, infrav1.OSWindows)
	setIfEmpty(&spec.PowerOffMode, infrav1.PowerOffHard)
	setIfEmpty(&spec.Processors, DefaultHyperVProcessors)
	setIfEmpty(&spec.MemoryMiB, DefaultHyperVMemoryMiB)
	if spec.DynamicMemory != nil {
		setIfEmpty(&spec.DynamicMemory.BufferPercent, DefaultHyperVBufferPercent)
	}
	for i := range spec.DataDisks {
		setIfEmpty(&spec.DataDisks[i].Type, infrav1.DiskDynamic)
	}
	if spec.GPU != nil {
		setIfEmpty(&spec.GPU.Count, 1)
	}
	enabled, template := spec.SecureBootSettings()
	spec.SecureBoot = &infrav1.HyperVSecureBoot{Enabled: &enabled, Template: template}
	if spec.PowerOffMode == infrav1.PowerOffTrySoft && spec.GuestSoftPowerOffTimeout == nil {
		spec.GuestSoftPowerOffTimeout = &metav1.Duration{Duration: DefaultGuestSoftPowerOffTimeout}
	}
}

// ValidateHyperVMachineSpec returns every problem of a HyperVMachineSpec, each with its field
// path below path (spec for a HyperVMachine, spec.template.spec for a template). Whether host
// names a host of the cluster and diskGiB fits the parent disk is checked when the VM is created.
func ValidateHyperVMachineSpec(spec infrav1.HyperVMachineSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.ParentDiskSource == nil {
		if problem := vhdxPathProblem(spec.ParentDisk); problem != "" {
			errs = append(errs, field.Invalid(path.Child("parentDisk"), spec.ParentDisk, problem))
		}
	} else if problem := parentSourceProblem(spec.ParentDiskSource.URL); problem != "" {
		errs = append(errs, field.Invalid(path.Child("parentDiskSource", "url"), spec.ParentDiskSource.URL, problem))
	}
	if spec.GuestCredentialsRef != nil && spec.OS == infrav1.OSLinux {
		errs = append(errs, field.Invalid(path.Child("guestCredentialsRef"), spec.GuestCredentialsRef.Name,
			"runs Windows powershell bootstrap data through PowerShell Direct; Linux machines bootstrap with cloud-init: remove it"))
	}
	if enabled, template := spec.SecureBootSettings(); enabled && spec.OS == infrav1.OSLinux && template == infrav1.SecureBootMicrosoftWindows {
		errs = append(errs, field.Invalid(path.Child("secureBoot", "template"), template,
			"Linux does not boot with the MicrosoftWindows template; use MicrosoftUEFICertificateAuthority"))
	}
	errs = append(errs, validateHyperVDataDisks(spec.DataDisks, path.Child("dataDisks"))...)
	errs = append(errs, validateHyperVGPU(spec, path.Child("gpu"))...)
	errs = append(errs, validateNaming(spec.OS, spec.NamingStrategy, path.Child("namingStrategy"))...)
	return append(errs, validateNetwork(spec.NetworkDevices(), path.Child("network"))...)
}
