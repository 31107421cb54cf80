package wire

// Error kinds. The first ones come from the operation scripts (Stop-Capwin, or a classified
// PowerShell error); the last three from the connection.
const (
	KindNotFound         = "NotFound"
	KindInvalidSpec      = "InvalidSpec"
	KindDiskFull         = "DiskFull"
	KindAccessDenied     = "AccessDenied"
	KindGuestUnavailable = "GuestUnavailable"
	KindGuestFailed      = "GuestFailed"
	// KindNoGPU: the host has no free GPU of the kind the machine asks for.
	KindNoGPU       = "NoGPU"
	KindFailed      = "Failed"
	KindUnreachable = "Unreachable"
	KindAuth        = "AuthFailed"
	KindTLS         = "TLSVerificationFailed"
	// KindCredentials: the host's credentials Secret is missing or incomplete.
	KindCredentials = "CredentialsNotFound"
)
