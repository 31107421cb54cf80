package v1beta1

// Firmware is the firmware a VM boots with.
// +kubebuilder:validation:Enum=efi;bios
type Firmware string

// Firmware types (on vSphere, the values of the VM's config.firmware).
const (
	// FirmwareEFI is UEFI firmware: needed for Secure Boot and a vTPM.
	FirmwareEFI Firmware = "efi"
	// FirmwareBIOS is legacy BIOS firmware.
	FirmwareBIOS Firmware = "bios"
)

// SecurityStatus is the firmware and security devices a VM has, as last read from the hypervisor.
type SecurityStatus struct {
	// firmware the VM boots with.
	// +optional
	Firmware Firmware `json:"firmware,omitempty"`
	// secureBoot is true when UEFI Secure Boot is on.
	// +optional
	SecureBoot bool `json:"secureBoot,omitempty"`
	// tpm is true when the VM has a virtual TPM (enabled, on Hyper-V).
	// +optional
	TPM bool `json:"tpm,omitempty"`
}
