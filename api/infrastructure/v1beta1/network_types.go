package v1beta1

// NetworkDeviceOptions are the per-NIC settings both machine kinds share beyond addresses:
// static routes, the MTU and the DNS search domains. They reach the guest in the network config
// (netplan v2) and, on Windows, in capwin's network document, which the launcher or the
// bootstrap's network step applies; docs/vcenter/networking.md says who applies what.
type NetworkDeviceOptions struct {
	// routes are static routes through this NIC, beside the default routes of gateway4 and
	// gateway6. Each next hop (via) must be in the subnet of one of the NIC's static addresses of
	// its family (or IPv6 link-local), unless the NIC gets that family's address by DHCP or from
	// a pool. On Windows with cloudbase-init they are applied by the bootstrap's network step
	// (cloudbase-init applies only the default route of a network config).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Routes []NetworkRoute `json:"routes,omitempty"`
	// mtu is the NIC's MTU in bytes (both address families): 576 to 9000, at least 1280 when
	// the NIC has IPv6. Unset keeps the image's (normally 1500).
	// +optional
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9000
	MTU *int32 `json:"mtu,omitempty"`
	// searchDomains are the DNS suffixes tried for names that are not fully qualified, in order.
	// On Windows they become the computer's one suffix search list (the launcher or the
	// bootstrap's network step sets it; cloudbase-init does not).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SearchDomains []string `json:"searchDomains,omitempty"`
}

// NetworkRoute is a static route: traffic to a network goes through a next hop on the NIC.
// +kubebuilder:validation:XValidation:rule="!isCIDR(self.to) || !isIP(self.via) || cidr(self.to).ip().family() == ip(self.via).family()",message="via must be of the address family of to"
type NetworkRoute struct {
	// to is the destination network in CIDR form, e.g. 10.20.0.0/16 (no host bits set).
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self) == cidr(self).masked()",message="must be a network in CIDR form with no host bits set, e.g. 10.20.0.0/16"
	To string `json:"to"`
	// via is the next hop, an IP address of the family of to.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	Via string `json:"via"`
	// metric ranks routes to the same network, lowest first: 1 to 9999 (route.exe's range; netplan
	// and New-NetRoute take it as it is). Unset leaves the guest's default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9999
	Metric *int32 `json:"metric,omitempty"`
}
