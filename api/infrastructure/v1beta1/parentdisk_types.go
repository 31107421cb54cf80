package v1beta1

// HyperVParentDiskSource is where capwin copies a machine's golden .vhdx from, once per host: to
// <diskPath>\parents\<sha256>.vhdx of the HyperVCluster (diskPath default
// C:\ProgramData\capwin\disks). The copy gets its final name only after its SHA-256 matched, so a
// file of that name is complete and verified, and every VM on the host with the same sha256 uses
// it as its parent. capwin never changes or deletes a copy: differencing disks depend on it.
type HyperVParentDiskSource struct {
	// url is an https:// address, or a UNC path \\server\share\path\file.vhdx. The host fetches it
	// as its computer account (LocalSystem), not as capwin's WinRM user: the share must grant the
	// host's computer account read access (see docs/hyperv/disks.md, Parent disk from a share or URL).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^(https://[^\s]+|\\\\[^\\/]+\\[^\\/]+\\[^\s].*)$`
	URL string `json:"url"`

	// sha256 is the file's SHA-256, 64 hexadecimal digits (Get-FileHash -Algorithm SHA256). A
	// copy whose hash differs is deleted and the machine shows InvalidSpec.
	// +required
	// +kubebuilder:validation:MinLength=64
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{64}$`
	SHA256 string `json:"sha256"`
}
