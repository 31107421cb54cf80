package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CloneMode says how a VM is cloned from its template.
// +kubebuilder:validation:Enum=linkedClone;fullClone
type CloneMode string

// Clone modes.
const (
	// LinkedClone shares the template's disk through a snapshot; fast, the disk cannot grow.
	LinkedClone CloneMode = "linkedClone"
	// FullClone copies the disk; it may be grown with diskGiB.
	FullClone CloneMode = "fullClone"
)

// VCenterMachineSpec is the desired VM of one Machine.
// +kubebuilder:validation:XValidation:rule="self.cloneMode != 'linkedClone' || has(self.snapshot)",message="linkedClone needs the template's snapshot"
// +kubebuilder:validation:XValidation:rule="self.cloneMode != 'linkedClone' || !has(self.diskGiB)",message="linkedClone cannot grow the disk: use fullClone with diskGiB"
// +kubebuilder:validation:XValidation:rule="self.powerOffMode == 'trySoft' || !has(self.guestSoftPowerOffTimeout)",message="guestSoftPowerOffTimeout is only used with powerOffMode trySoft"
// +kubebuilder:validation:XValidation:rule="!has(self.secureBoot) || !self.secureBoot || (has(self.firmware) && self.firmware == 'efi')",message="secureBoot needs firmware efi"
// +kubebuilder:validation:XValidation:rule="!has(self.vTPM) || !self.vTPM || (has(self.firmware) && self.firmware == 'efi')",message="vTPM needs firmware efi"
type VCenterMachineSpec struct {
	// providerID is vsphere://<BIOS UUID>, set by the provider.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// template is the VM template to clone: an inventory path or name, or the name of an item of
	// contentLibrary.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Template string `json:"template"`

	// contentLibrary makes template the name of a VM template item of this library (an OVF
	// item is refused: convert it to a VM template item).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ContentLibrary string `json:"contentLibrary,omitempty"`

	// cloneMode is fullClone (default) or linkedClone.
	// +kubebuilder:default=fullClone
	// +optional
	CloneMode CloneMode `json:"cloneMode,omitempty"`

	// snapshot of the template that a linked clone is based on.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Snapshot string `json:"snapshot,omitempty"`

	// placement is the datacenter (default: the VCenterCluster's), resource pool, datastore and
	// folder. A Machine's failure domain overrides it.
	// +optional
	Placement Placement `json:"placement,omitempty,omitzero"`

	// storagePolicy is the name of a VM storage policy for the VM's disks.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	StoragePolicy string `json:"storagePolicy,omitempty"`

	// numCPUs of the VM; unset keeps the template's.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=768
	NumCPUs int32 `json:"numCPUs,omitempty"`

	// memoryMiB of the VM; unset keeps the template's.
	// +optional
	// +kubebuilder:validation:Minimum=512
	// +kubebuilder:validation:Maximum=25165824
	MemoryMiB int64 `json:"memoryMiB,omitempty"`

	// diskGiB grows the first disk (fullClone only); it cannot be smaller than the template's.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	DiskGiB int32 `json:"diskGiB,omitempty"`

	// dataDisks are disks created with the VM besides the template's, and deleted with it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=14
	DataDisks []VCenterDataDisk `json:"dataDisks,omitempty"`

	// tags are vSphere tags (category and name) attached to the VM before its first power-on,
	// so tag-based policies (backup, DRS, storage) apply from its first boot. vCenter removes
	// them with the VM.
	// +optional
	// +listType=map
	// +listMapKey=category
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Tags []VCenterTag `json:"tags,omitempty"`
	// firmware is the template's firmware, efi or bios; unset, it is not checked. capwin does not
	// convert a template's firmware (its disk would not boot): a machine whose firmware differs from
	// its template's is refused. secureBoot and vTPM need efi.
	// +optional
	Firmware Firmware `json:"firmware,omitempty"`

	// secureBoot turns UEFI Secure Boot on or off in the clone; unset keeps the template's.
	// +optional
	SecureBoot *bool `json:"secureBoot,omitempty"`

	// vTPM adds a virtual TPM 2.0 device to the clone. vSphere encrypts a VM with a vTPM (its
	// configuration files, not its disks) and so needs a key provider in vCenter and the
	// Cryptographer privileges for capwin's user.
	// +optional
	VTPM bool `json:"vTPM,omitempty"`

	// pciDevices are PCI devices (GPUs) the clone gets through DirectPath I/O or NVIDIA GRID vGPU
	// (docs/gpus.md, vCenter). The clone's memory is then fully reserved, as vSphere requires, and
	// the VM runs only on a host that has such a device free.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	PCIDevices []VCenterPCIDevice `json:"pciDevices,omitempty"`

	// network devices of the VM, in order.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Network []NetworkDevice `json:"network"`

	// namingStrategy makes the computer names of Windows machines from a template (Linux
	// machines keep the Machine's name). Unset: the Machine's name when it fits in 15
	// characters, else its first six characters, '-' and a hash of it.
	// +optional
	NamingStrategy *NamingStrategy `json:"namingStrategy,omitempty"`

	// os of the template: Windows (default) or Linux (control-plane VMs with CABPK data).
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

	// antiAffinity spreads the VMs of this machine's MachineDeployment (or control plane) over
	// the hosts of their DRS cluster (docs/vcenter/placement.md, Anti-affinity).
	// +optional
	AntiAffinity *VCenterAntiAffinity `json:"antiAffinity,omitempty"`

	// guestCredentialsRef names a Secret (keys username, password) of a guest administrator, for
	// templates without cloudbase-init: once VMware Tools runs, capwin copies the bootstrap data
	// (format powershell) into the guest and starts it with guest operations, logging in as this
	// user. The bootstrap data is then never stored in the VM config. Windows only.
	// +optional
	GuestCredentialsRef *SecretReference `json:"guestCredentialsRef,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=vcentermachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.provisioning.state"
// +kubebuilder:printcolumn:name="Bootstrap step",type="string",JSONPath=".status.bootstrap.step"
// +kubebuilder:printcolumn:name="Bootstrap",type="string",JSONPath=".status.bootstrap.state"
// +kubebuilder:printcolumn:name="Computer name",type="string",JSONPath=".status.computerName"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",priority=1
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// VCenterMachine is the vCenter VM of one Machine.
type VCenterMachine struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired VM.
	// +required
	Spec VCenterMachineSpec `json:"spec,omitzero"`
	// status is the observed state.
	// +optional
	Status MachineStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the conditions.
func (m *VCenterMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *VCenterMachine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// GetMachineStatus returns the status the machine lifecycle writes.
func (m *VCenterMachine) GetMachineStatus() *MachineStatus { return &m.Status }

// GetProviderID returns a pointer to spec.providerID.
func (m *VCenterMachine) GetProviderID() *string { return &m.Spec.ProviderID }

// GetNetworkDevices returns spec.network.
func (m *VCenterMachine) GetNetworkDevices() []NetworkDevice { return m.Spec.Network }

// +kubebuilder:object:root=true

// VCenterMachineList is a list of VCenterMachine.
type VCenterMachineList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VCenterMachine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &VCenterMachine{}, &VCenterMachineList{})
}
