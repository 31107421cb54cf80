package v1beta1

// VCenterClusterIdentitySpec is a vCenter login and what it lends: the vCenters it may be sent to.
type VCenterClusterIdentitySpec struct {
	ClusterIdentitySpec `json:",inline"`

	// servers are the vCenters the login may be sent to, each with the certificate check capwin
	// makes. A VCenterCluster that uses the identity with another server, or with another
	// certificate check, is refused before any login. An identity without servers lends its
	// login to no vCenter (identities made before this field: add it).
	// +optional
	// +listType=map
	// +listMapKey=server
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Servers []VCenterIdentityServer `json:"servers,omitempty"`
}

// VCenterIdentityServer is one vCenter an identity's login may be sent to.
// +kubebuilder:validation:XValidation:rule="has(self.thumbprint) || has(self.caBundle)",message="set thumbprint or caBundle: a lent login goes only to a vCenter whose certificate is verified"
type VCenterIdentityServer struct {
	// server is vCenter's URL, as VCenterClusters write it: https://host or https://host:port.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https://[^\s/]+/?$`
	Server string `json:"server"`

	// thumbprint is the SHA-256 (or SHA-1) fingerprint of the server's certificate, as
	// colon-separated hex pairs. It wins over caBundle.
	// +optional
	// +kubebuilder:validation:Pattern=`^([A-Fa-f0-9]{2}:){19}[A-Fa-f0-9]{2}$|^([A-Fa-f0-9]{2}:){31}[A-Fa-f0-9]{2}$`
	Thumbprint string `json:"thumbprint,omitempty"`

	// caBundle is a PEM bundle of CAs that sign the server's certificate.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`
}

// HyperVClusterIdentitySpec is a Hyper-V host login and what it lends: the hosts it may be sent
// to.
type HyperVClusterIdentitySpec struct {
	ClusterIdentitySpec `json:",inline"`

	// hosts are the Hyper-V hosts the login may be sent to, with how capwin talks to them. A
	// HyperVCluster host that uses the identity with another address, port, authType or
	// certificate check is refused before any login. An identity without hosts lends its login
	// to no host (identities made before this field: add it).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Hosts []HyperVIdentityHosts `json:"hosts,omitempty"`
}

// HyperVIdentityHosts is a set of hosts an identity's login may be sent to, all reached the same
// way.
type HyperVIdentityHosts struct {
	// addresses are the hosts' DNS names (host.example.com; *.hv.example.com for every name below
	// hv.example.com) and IP addresses or CIDR ranges (10.1.0.0/24). A HyperVCluster host's
	// address must be one of them, as written.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Addresses []string `json:"addresses"`

	// port of the hosts' WinRM HTTPS listener.
	// +kubebuilder:default=5986
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// authType is NTLM (default) or Basic. With Basic the password itself travels (inside TLS).
	// +kubebuilder:default=NTLM
	// +optional
	AuthType WinRMAuthType `json:"authType,omitempty"`

	// caBundle is a PEM bundle of CAs that sign the hosts' WinRM certificates; unset: the system
	// roots. Skipping verification is never lent.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`
}
