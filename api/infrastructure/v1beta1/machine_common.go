package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatingSystem of a machine's image. Windows machines get NetBIOS-safe computer names and
// Windows bootstrap data; Linux machines (control planes) get cloud-init data from CABPK.
// +kubebuilder:validation:Enum=Windows;Linux
type OperatingSystem string

// Operating systems.
const (
	OSWindows OperatingSystem = "Windows"
	OSLinux   OperatingSystem = "Linux"
)

// PowerOffMode says how a VM is stopped before it is deleted.
// +kubebuilder:validation:Enum=hard;soft;trySoft
type PowerOffMode string

// Power-off modes.
const (
	// PowerOffHard cuts the power at once.
	PowerOffHard PowerOffMode = "hard"
	// PowerOffSoft asks the guest to shut down and waits for it.
	PowerOffSoft PowerOffMode = "soft"
	// PowerOffTrySoft asks the guest, then cuts the power after the timeout.
	PowerOffTrySoft PowerOffMode = "trySoft"
)

// NetworkDevice is one virtual NIC.
// +kubebuilder:validation:XValidation:rule="!(has(self.dhcp4) && self.dhcp4) || !has(self.ipAddrs) || self.ipAddrs.all(a, a.contains(':'))",message="dhcp4 and static IPv4 addresses exclude each other"
// +kubebuilder:validation:XValidation:rule="!(has(self.dhcp6) && self.dhcp6) || !has(self.ipAddrs) || self.ipAddrs.all(a, !a.contains(':'))",message="dhcp6 and static IPv6 addresses exclude each other"
type NetworkDevice struct {
	// networkName is the port group / network the NIC connects to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	NetworkName string `json:"networkName"`
	// dhcp4 gets an IPv4 address by DHCP.
	// +optional
	DHCP4 bool `json:"dhcp4,omitempty"`
	// dhcp6 gets an IPv6 address by DHCP.
	// +optional
	DHCP6 bool `json:"dhcp6,omitempty"`
	// ipAddrs are static addresses in CIDR form, e.g. 10.0.0.21/24.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="must be an address in CIDR form, e.g. 10.0.0.21/24"
	IPAddrs []string `json:"ipAddrs,omitempty"`
	// gateway4 is the IPv4 default gateway.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address"
	Gateway4 string `json:"gateway4,omitempty"`
	// gateway6 is the IPv6 default gateway.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 6",message="must be an IPv6 address"
	Gateway6 string `json:"gateway6,omitempty"`
	// nameservers for this NIC.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="must be an IP address"
	Nameservers []string `json:"nameservers,omitempty"`
	// addressesFromPools claims addresses from Cluster API IPAM pools (one IPAddressClaim each).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	AddressesFromPools []corev1.TypedLocalObjectReference `json:"addressesFromPools,omitempty"`
	// macAddr pins the NIC's MAC address; empty lets vCenter assign one.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$`
	MACAddr string `json:"macAddr,omitempty"`
}

// MachineInitializationStatus carries the contract's initialization flags.
// +kubebuilder:validation:MinProperties=1
type MachineInitializationStatus struct {
	// provisioned is true once the VM exists, runs and has reported its addresses.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// ProvisioningState is where a machine is in its lifecycle (an explicit state, not a condition).
// +kubebuilder:validation:Enum=Pending;Cloning;PoweringOn;WaitingForAddresses;Provisioned;Deleting
type ProvisioningState string

// Provisioning states.
const (
	StatePending             ProvisioningState = "Pending"
	StateCloning             ProvisioningState = "Cloning"
	StatePoweringOn          ProvisioningState = "PoweringOn"
	StateWaitingForAddresses ProvisioningState = "WaitingForAddresses"
	StateProvisioned         ProvisioningState = "Provisioned"
	StateDeleting            ProvisioningState = "Deleting"
)

// Provisioning is the machine's state with the time it was entered.
type Provisioning struct {
	// state of the machine.
	// +optional
	State ProvisioningState `json:"state,omitempty"`
	// since is when the state was entered.
	// +optional
	Since metav1.Time `json:"since,omitempty,omitzero"`
}

// BootstrapStatus is the last progress report of the guest's bootstrap script.
type BootstrapStatus struct {
	// step the script is at, e.g. join.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Step string `json:"step,omitempty"`
	// state: Running, Rebooting, Failed or Succeeded.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	State string `json:"state,omitempty"`
	// message of the step.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// logTail is the end of C:\var\log\capwin\bootstrap.log.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	LogTail string `json:"logTail,omitempty"`
}

// NodeInfo describes the nodes a template makes (autoscaling from zero).
type NodeInfo struct {
	// operatingSystem of the nodes: windows or linux.
	// +optional
	// +kubebuilder:validation:Enum=windows;linux
	OperatingSystem string `json:"operatingSystem,omitempty"`
}

// MachineTemplateStatus is the status of a machine template: what a node from it offers, so the
// cluster autoscaler can scale a MachineDeployment from zero.
type MachineTemplateStatus struct {
	// capacity of a node (cpu, memory).
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// nodeInfo of a node.
	// +optional
	NodeInfo NodeInfo `json:"nodeInfo,omitempty,omitzero"`
}
