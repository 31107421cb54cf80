package v1beta1

// VCenterFirmware is the firmware a vSphere VM boots with.
// +kubebuilder:validation:Enum=efi;bios
type VCenterFirmware string

// vSphere firmware types (the values of the VM's config.firmware).
const (
	// FirmwareEFI is UEFI firmware: needed for Secure Boot and a vTPM.
	FirmwareEFI VCenterFirmware = "efi"
	// FirmwareBIOS is legacy BIOS firmware.
	FirmwareBIOS VCenterFirmware = "bios"
)
