package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HyperVMachineSpec is the desired VM of one Machine on a Hyper-V host. The VM is always a
// generation 2 VM (UEFI firmware, Secure Boot capable, boots from VHDX); there is no field to
// choose a generation.
// +kubebuilder:validation:XValidation:rule="self.powerOffMode == 'trySoft' || !has(self.guestSoftPowerOffTimeout)",message="guestSoftPowerOffTimeout is only used with powerOffMode trySoft"
// +kubebuilder:validation:XValidation:rule="!has(self.dynamicMemory) || !has(self.memoryMiB) || (self.dynamicMemory.minimumMiB <= self.memoryMiB && self.memoryMiB <= self.dynamicMemory.maximumMiB)",message="dynamicMemory needs minimumMiB <= memoryMiB <= maximumMiB (memoryMiB is the startup memory)"
// +kubebuilder:validation:XValidation:rule="!has(self.gpu) || self.gpu.mode != 'Assign' || !has(self.dynamicMemory)",message="gpu mode Assign needs static memory: Discrete Device Assignment does not work with dynamic memory; remove dynamicMemory"
// +kubebuilder:validation:XValidation:rule="!has(self.nestedVirtualization) || !self.nestedVirtualization || !has(self.dynamicMemory)",message="nestedVirtualization needs static memory: Hyper-V does not expose virtualization extensions to a VM with dynamic memory; remove dynamicMemory"
// +kubebuilder:validation:XValidation:rule="has(self.parentDisk) != has(self.parentDiskSource)",message="set exactly one of parentDisk and parentDiskSource",fieldPath=".parentDisk"
// +kubebuilder:validation:XValidation:rule="!has(self.automaticStartDelaySeconds) || !has(self.automaticStartAction) || self.automaticStartAction != 'Nothing'",message="automaticStartDelaySeconds needs an automaticStartAction other than Nothing"
// +kubebuilder:validation:XValidation:rule="!has(self.gpu) || self.gpu.mode != 'Assign' || !has(self.automaticStopAction) || self.automaticStopAction == 'TurnOff'",message="gpu mode Assign needs automaticStopAction TurnOff: Discrete Device Assignment cannot save or shut down a VM with the host"
// +kubebuilder:validation:XValidation:rule="!has(self.automaticCheckpoints) || !self.automaticCheckpoints || !has(self.checkpointType) || self.checkpointType != 'Disabled'",message="automaticCheckpoints needs a checkpointType other than Disabled"
type HyperVMachineSpec struct {
	// providerID is hyperv://<host>/<VM id>, set by the provider.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// host pins the VM to the host of the HyperVCluster's spec.hosts with this name. Unset, capwin
	// picks an available host (of the Machine's failure domain, if it has one).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Host string `json:"host,omitempty"`

	// parentDisk is the absolute path, on the hosts, of the golden .vhdx image, e.g.
	// D:\images\win2022.vhdx. It must be present at this path on every host the VM may run on.
	// Each VM gets a differencing disk whose parent is this file, so the file must not change
	// while VMs use it: publish a new image under a new name and a new HyperVMachineTemplate.
	// Exactly one of parentDisk and parentDiskSource is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=259
	ParentDisk string `json:"parentDisk,omitempty"`

	// parentDiskSource is where capwin copies the golden .vhdx from, once per host, verified by its
	// SHA-256, instead of a file that must already be on every host (parentDisk).
	// +optional
	ParentDiskSource *HyperVParentDiskSource `json:"parentDiskSource,omitempty"`

	// diskGiB grows the VM's differencing disk to this size; unset keeps the parent's size. It
	// cannot be smaller than the parent disk (checked when the VM is created).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	DiskGiB int32 `json:"diskGiB,omitempty"`

	// dataDisks are VHDX files created with the VM besides its differencing disk, and deleted
	// with it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	DataDisks []HyperVDataDisk `json:"dataDisks,omitempty"`

	// processors is the number of virtual processors.
	// +kubebuilder:default=2
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=240
	Processors int32 `json:"processors,omitempty"`

	// memoryMiB is the VM's memory (its startup memory with dynamicMemory), a multiple of 2 as
	// Hyper-V requires.
	// +kubebuilder:default=4096
	// +optional
	// +kubebuilder:validation:Minimum=512
	// +kubebuilder:validation:Maximum=12582912
	// +kubebuilder:validation:MultipleOf=2
	MemoryMiB int64 `json:"memoryMiB,omitempty"`

	// dynamicMemory lets Hyper-V grow and shrink the VM's memory between minimumMiB and maximumMiB.
	// Unset, the VM has a fixed memoryMiB.
	// +optional
	DynamicMemory *HyperVDynamicMemory `json:"dynamicMemory,omitempty"`

	// nestedVirtualization exposes the host processor's virtualization extensions to the guest
	// (Set-VMProcessor -ExposeVirtualizationExtensions), so the guest can run Hyper-V itself: Windows
	// workers need it for Hyper-V isolated containers (RuntimeClass handler
	// runhcs-wcow-hypervisor). Hyper-V requires static memory for it, so it excludes dynamicMemory,
	// and sets it only while the VM is off: capwin sets it when it creates the VM.
	// +optional
	NestedVirtualization bool `json:"nestedVirtualization,omitempty"`

	// secureBoot configures UEFI Secure Boot. Unset, it is on, with the template that fits os.
	// +optional
	SecureBoot *HyperVSecureBoot `json:"secureBoot,omitempty"`

	// vTPM gives the VM a virtual TPM, for BitLocker and Credential Guard in the guest. capwin sets a
	// local key protector (an untrusted guardian of the host, not a Host Guardian Service), so the
	// VM starts only on a host that holds that guardian.
	// +optional
	VTPM bool `json:"vTPM,omitempty"`

	// gpu gives the VM a GPU partition or whole GPUs of its host (docs/gpus.md, Hyper-V); the VM is
	// placed only on a host with a free one.
	// +optional
	GPU *HyperVGPU `json:"gpu,omitempty"`

	// antiAffinity keeps the VMs of this machine's MachineDeployment (or control plane) on
	// different nodes of the HyperVCluster's failover cluster (docs/hyperv/placement.md, Failover clusters).
	// +optional
	AntiAffinity *HyperVAntiAffinity `json:"antiAffinity,omitempty"`

	// network adapters of the VM, in order.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Network []HyperVNetworkDevice `json:"network"`

	// namingStrategy makes the computer names of Windows machines from a template (Linux
	// machines keep the Machine's name). Unset: the Machine's name when it fits in 15
	// characters, else its first six characters, '-' and a hash of it.
	// +optional
	NamingStrategy *NamingStrategy `json:"namingStrategy,omitempty"`

	// os of the parent disk's image: Windows (default) or Linux (control-plane VMs with CABPK data).
	// +kubebuilder:default=Windows
	// +optional
	OS OperatingSystem `json:"os,omitempty"`

	// powerOffMode before delete: hard (default), soft or trySoft.
	// +kubebuilder:default=hard
	// +optional
	PowerOffMode PowerOffMode `json:"powerOffMode,omitempty"`

	// guestSoftPowerOffTimeout is how long trySoft waits for the guest (default 5m).
	// +optional
	GuestSoftPowerOffTimeout *metav1.Duration `json:"guestSoftPowerOffTimeout,omitempty"`

	// guestCredentialsRef names a Secret (keys username, password) of a guest administrator, for
	// images without cloudbase-init: once the VM's integration services run, capwin copies the
	// bootstrap data (format powershell) into the guest and starts it through PowerShell Direct,
	// logging in as this user. Windows only.
	// +optional
	GuestCredentialsRef *SecretReference `json:"guestCredentialsRef,omitempty"`

	// Checkpoint and automatic start and stop settings.
	HyperVVMSettings `json:",inline"`
}

// HyperVDynamicMemory is the range Hyper-V may move a VM's memory in. Hyper-V requires every
// amount to be a multiple of 2 MiB.
type HyperVDynamicMemory struct {
	// minimumMiB is the least memory Hyper-V leaves the VM; at most memoryMiB.
	// +required
	// +kubebuilder:validation:Minimum=32
	// +kubebuilder:validation:Maximum=12582912
	// +kubebuilder:validation:MultipleOf=2
	MinimumMiB int64 `json:"minimumMiB"`
	// maximumMiB is the most memory Hyper-V gives the VM; at least memoryMiB.
	// +required
	// +kubebuilder:validation:Minimum=512
	// +kubebuilder:validation:Maximum=12582912
	// +kubebuilder:validation:MultipleOf=2
	MaximumMiB int64 `json:"maximumMiB"`
	// bufferPercent is the memory Hyper-V keeps free in the VM, as a percentage of what the guest
	// uses.
	// +kubebuilder:default=20
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=2000
	BufferPercent int32 `json:"bufferPercent,omitempty"`
}

// SecureBootTemplate is the set of keys UEFI Secure Boot trusts.
// +kubebuilder:validation:Enum=MicrosoftWindows;MicrosoftUEFICertificateAuthority;OpenSourceShieldedVM
type SecureBootTemplate string

// Secure Boot templates.
const (
	// SecureBootMicrosoftWindows boots Windows only.
	SecureBootMicrosoftWindows SecureBootTemplate = "MicrosoftWindows"
	// SecureBootMicrosoftUEFICertificateAuthority boots Linux distributions whose shim Microsoft
	// signed.
	SecureBootMicrosoftUEFICertificateAuthority SecureBootTemplate = "MicrosoftUEFICertificateAuthority"
	// SecureBootOpenSourceShieldedVM boots Linux shielded VMs.
	SecureBootOpenSourceShieldedVM SecureBootTemplate = "OpenSourceShieldedVM"
)

// HyperVSecureBoot configures a VM's UEFI Secure Boot.
type HyperVSecureBoot struct {
	// enabled turns Secure Boot on (default) or off.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// template is the set of trusted keys: MicrosoftWindows for Windows (default), and
	// MicrosoftUEFICertificateAuthority for Linux (default).
	// +optional
	Template SecureBootTemplate `json:"template,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hypervmachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Host",type="string",JSONPath=".status.vm.host"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.provisioning.state"
// +kubebuilder:printcolumn:name="Bootstrap step",type="string",JSONPath=".status.bootstrap.step"
// +kubebuilder:printcolumn:name="Bootstrap",type="string",JSONPath=".status.bootstrap.state"
// +kubebuilder:printcolumn:name="Computer name",type="string",JSONPath=".status.computerName"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",priority=1
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// HyperVMachine is the Hyper-V VM of one Machine.
type HyperVMachine struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired VM.
	// +required
	Spec HyperVMachineSpec `json:"spec,omitzero"`
	// status is the observed state.
	// +optional
	Status MachineStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the conditions.
func (m *HyperVMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *HyperVMachine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// GetMachineStatus returns the status the machine lifecycle writes.
func (m *HyperVMachine) GetMachineStatus() *MachineStatus { return &m.Status }

// GetProviderID returns a pointer to spec.providerID.
func (m *HyperVMachine) GetProviderID() *string { return &m.Spec.ProviderID }

// GetNetworkDevices returns spec.network as the network devices every machine kind shares. A
// device's NetworkName is its virtual switch; empty means the HyperVCluster's virtualSwitch.
func (m *HyperVMachine) GetNetworkDevices() []NetworkDevice { return m.Spec.NetworkDevices() }

// SecureBootSettings returns whether the VM boots with Secure Boot and with which template,
// applying the defaults (on; the template that fits os) to what the spec leaves unset.
func (s *HyperVMachineSpec) SecureBootSettings() (enabled bool, template SecureBootTemplate) {
	enabled, template = true, SecureBootMicrosoftWindows
	if s.OS == OSLinux {
		template = SecureBootMicrosoftUEFICertificateAuthority
	}
	if sb := s.SecureBoot; sb != nil {
		if sb.Enabled != nil {
			enabled = *sb.Enabled
		}
		if sb.Template != "" {
			template = sb.Template
		}
	}
	return enabled, template
}

// +kubebuilder:object:root=true

// HyperVMachineList is a list of HyperVMachine.
type HyperVMachineList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HyperVMachine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &HyperVMachine{}, &HyperVMachineList{})
}

// HyperVNetworkDevice is one network adapter of a Hyper-V VM. Its fields mean what they mean on
// NetworkDevice (vCenter), with the same names and rules, except that networkName is the virtual
// switch and may be empty; vlanID is Hyper-V's own. The fields are declared here rather than by
// embedding NetworkDevice, whose networkName is required.
// +kubebuilder:validation:XValidation:rule="!(has(self.dhcp4) && self.dhcp4) || !has(self.ipAddrs) || self.ipAddrs.all(a, a.contains(':'))",message="dhcp4 and static IPv4 addresses exclude each other"
// +kubebuilder:validation:XValidation:rule="!(has(self.dhcp6) && self.dhcp6) || !has(self.ipAddrs) || self.ipAddrs.all(a, !a.contains(':'))",message="dhcp6 and static IPv6 addresses exclude each other"
type HyperVNetworkDevice struct {
	// networkName is the Hyper-V virtual switch the adapter connects to; empty means the
	// HyperVCluster's virtualSwitch.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	NetworkName string `json:"networkName,omitempty"`
	// vlanID tags the adapter's traffic with this VLAN (access mode); unset leaves it untagged.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	VLANID *int32 `json:"vlanID,omitempty"`
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
	// nameservers for this adapter.
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
	// macAddr pins the adapter's static MAC address; empty gives it a static, locally administered
	// address derived from the machine's UID (known before the VM exists, the same on every retry).
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$`
	MACAddr string `json:"macAddr,omitempty"`
	// Routes, MTU and search domains.
	NetworkDeviceOptions `json:",inline"`
}

// NetworkDevice returns the device as the shared NetworkDevice, the switch in NetworkName.
func (d *HyperVNetworkDevice) NetworkDevice() NetworkDevice {
	return NetworkDevice{
		NetworkName: d.NetworkName, DHCP4: d.DHCP4, DHCP6: d.DHCP6, IPAddrs: d.IPAddrs,
		Gateway4: d.Gateway4, Gateway6: d.Gateway6, Nameservers: d.Nameservers,
		AddressesFromPools: d.AddressesFromPools, MACAddr: d.MACAddr, NetworkDeviceOptions: d.NetworkDeviceOptions,
	}
}

// NetworkDevices returns spec.network as shared NetworkDevices (see HyperVNetworkDevice.NetworkDevice).
func (s *HyperVMachineSpec) NetworkDevices() []NetworkDevice {
	if s.Network == nil {
		return nil
	}
	devices := make([]NetworkDevice, len(s.Network))
	for i := range s.Network {
		devices[i] = s.Network[i].NetworkDevice()
	}
	return devices
}
