package v1beta1

// ActiveDirectory joins the node to an Active Directory domain before it joins the cluster, so
// that containers can run as a group Managed Service Account (gMSA). An empty object ({}, what
// the cluster templates pass when no domain is set) means no domain join.
// +kubebuilder:validation:XValidation:rule="has(self.domain) == has(self.credentials) && (has(self.domain) || (!has(self.organizationalUnit) && !has(self.dnsServers)))",message="activeDirectory: set domain and credentials ({} means no domain join)"
type ActiveDirectory struct {
	// domain is the DNS name of the domain, e.g. corp.example.com.
	// +optional
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$`
	Domain string `json:"domain,omitempty"`

	// organizationalUnit is the distinguished name of the OU the computer account is created in,
	// e.g. OU=Kubernetes,DC=corp,DC=example,DC=com. Unset: the domain's default Computers
	// container.
	// +optional
	// +kubebuilder:validation:MinLength=4
	// +kubebuilder:validation:MaxLength=1024
	OrganizationalUnit string `json:"organizationalUnit,omitempty"`

	// dnsServers are set on the node's network adapters before the join: the domain's DNS
	// servers, which find its domain controllers. Unset keeps the adapters' DNS servers (from
	// the machine's network settings or DHCP).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=45
	DNSServers []string `json:"dnsServers,omitempty"`

	// credentials name a Secret in the config's namespace with the keys username (DOMAIN\user or
	// user@domain) and password (type kubernetes.io/basic-auth) of an account allowed to join
	// computers to the domain (in the OU). Use an account with only that right: the password is
	// part of the node's bootstrap data.
	// +optional
	Credentials *SecretName `json:"credentials,omitempty"`
}
