package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
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
	// Routes, MTU and search domains.
	NetworkDeviceOptions `json:",inline"`
}

// MachineInitializationStatus carries the contract's initialization flags.
// +kubebuilder:validation:MinProperties=1
type MachineInitializationStatus struct {
	// provisioned is true once the VM exists, runs and has reported its addresses.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// ProvisioningState is where a machine is in its lifecycle (an explicit state, not a condition).
// +kubebuilder:validation:Enum=Pending;Cloning;Configuring;PoweringOn;WaitingForAddresses;Provisioned;Deleting
type ProvisioningState string

// Provisioning states.
const (
	StatePending             ProvisioningState = "Pending"
	StateCloning             ProvisioningState = "Cloning"
	StateConfiguring         ProvisioningState = "Configuring"
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
	// failures counts the create tasks that failed in a row; the next create waits
	// guest-poll-interval doubled per failure (at most 30 of them) from since.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Failures int32 `json:"failures,omitempty"`
}

// BootstrapStatus is the last progress report of the guest's bootstrap script.
type BootstrapStatus struct {
	// step the script is at, e.g. join.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Step string `json:"step,omitempty"`
	// state is Running, Rebooting, Failed or Succeeded.
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
	// conditions holds Ready, False with reason InvalidSpec while the template breaks a rule of its
	// admission webhook (it was stored while the webhook was not running); absent otherwise.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineStatus is the observed state of a machine of either kind; the machine lifecycle
// reconciler writes it.
type MachineStatus struct {
	// conditions are Ready, VMProvisioned, BootstrapSucceeded and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// initialization reports the contract's provisioning milestones.
	// +optional
	Initialization MachineInitializationStatus `json:"initialization,omitempty,omitzero"`
	// addresses of the VM's own NICs.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`
	// provisioning is the machine's lifecycle state.
	// +optional
	Provisioning Provisioning `json:"provisioning,omitempty,omitzero"`
	// vm identifies the VM in the hypervisor.
	// +optional
	VM VMReference `json:"vm,omitempty,omitzero"`
	// task is the hypervisor task in flight (clone, power, destroy), polled by later reconciles.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Task string `json:"task,omitempty"`
	// dataDisks are the VM's data disks with the SCSI address the guest finds each at.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	DataDisks []DataDiskStatus `json:"dataDisks,omitempty"`
	// tags are the vSphere tags of spec.tags attached to the VM, with their ids (vCenter only:
	// Hyper-V has no tags).
	// +optional
	// +listType=map
	// +listMapKey=category
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Tags []VCenterTagStatus `json:"tags,omitempty"`
	// security is the VM's firmware, Secure Boot and virtual TPM.
	// +optional
	Security SecurityStatus `json:"security,omitempty,omitzero"`
	// computerName is the Windows computer (NetBIOS) name given to the guest.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ComputerName string `json:"computerName,omitempty"`
	// bootstrap is the guest's last bootstrap report.
	// +optional
	Bootstrap BootstrapStatus `json:"bootstrap,omitempty,omitzero"`
	// observedGeneration is the last generation reconciled without error.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// VMReference identifies a VM.
type VMReference struct {
	// id is the hypervisor's reference: the managed object reference value in vCenter (vm-42),
	// the VM id on Hyper-V.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ID string `json:"id,omitempty"`
	// instanceUUID is the VM's instance UUID (= the machine object's UID).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	InstanceUUID string `json:"instanceUUID,omitempty"`
	// biosUUID is the VM's BIOS UUID (the providerID's value).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	BIOSUUID string `json:"biosUUID,omitempty"`
	// host is the Hyper-V host that runs the VM (Hyper-V only).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Host string `json:"host,omitempty"`
}
