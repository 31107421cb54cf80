package v1beta1

// VCenterClusterIdentitySpec is a vCenter login and what it lends: the vCenters it may be sent to
// and the vCenter objects the borrowing clusters' machines may use.
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

	// allowed lists the vCenter objects the borrowing clusters' machines may use. Each object a
	// machine or failure domain names (or leaves to vCenter's default) is checked once vCenter
	// resolved it, before it is used; a list left empty allows none of its kind.
	// +optional
	Allowed VCenterAllowed `json:"allowed,omitempty,omitzero"`
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

// VCenterAllowed lists vCenter objects by absolute inventory path (/DC0/vm/templates). An entry
// allows the object at that path and, for folders and resource pools, everything below it.
type VCenterAllowed struct {
	// templates are the VM templates machines may clone, or folders of them.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:Pattern=`^/[^*?\[\]]+$`
	Templates []string `json:"templates,omitempty"`

	// contentLibraries are the content libraries (by name) whose VM template items machines may
	// clone.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	ContentLibraries []string `json:"contentLibraries,omitempty"`

	// folders are the VM folders machines may be put in, with their subfolders.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:Pattern=`^/[^*?\[\]]+$`
	Folders []string `json:"folders,omitempty"`

	// resourcePools are the resource pools (or clusters' and hosts' Resources) machines may run
	// in, with the pools below them.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:Pattern=`^/[^*?\[\]]+$`
	ResourcePools []string `json:"resourcePools,omitempty"`

	// datastores are the datastores machines' disks may be put on (or datastore folders).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:Pattern=`^/[^*?\[\]]+$`
	Datastores []string `json:"datastores,omitempty"`

	// networks are the port groups and networks machines' NICs may join (or network folders).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:Pattern=`^/[^*?\[\]]+$`
	Networks []string `json:"networks,omitempty"`

	// storagePolicies are the storage policies (by name) machines may name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	StoragePolicies []string `json:"storagePolicies,omitempty"`
}

// HyperVClusterIdentitySpec is a Hyper-V host login and what it lends: the hosts it may be sent
// to and the host resources the borrowing clusters may use.
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

	// allowed lists the host resources the borrowing clusters may use; a list left empty allows
	// none of its kind.
	// +optional
	Allowed HyperVAllowed `json:"allowed,omitempty,omitzero"`
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

// HyperVAllowed lists host resources. Windows paths compare without regard to case; a folder
// allows everything below it.
type HyperVAllowed struct {
	// parentDisks are the .vhdx files, or folders of them (C:\golden\), machines may name as
	// parentDisk.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=3
	// +kubebuilder:validation:items:MaxLength=260
	ParentDisks []string `json:"parentDisks,omitempty"`

	// parentDiskSources are the https URL prefixes (https://images.example.com/windows/) and share
	// folders (\\files\images\) machines may copy a parentDiskSource from.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=3
	// +kubebuilder:validation:items:MaxLength=2048
	ParentDiskSources []string `json:"parentDiskSources,omitempty"`

	// paths are the folders under which a cluster's vmPath, diskPath and failover storagePath may
	// lie. capwin's default folders (C:\ProgramData\capwin\vms and \disks) need no entry.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=3
	// +kubebuilder:validation:items:MaxLength=248
	Paths []string `json:"paths,omitempty"`

	// switches are the virtual switches (by name) clusters and machines may connect VMs to.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Switches []string `json:"switches,omitempty"`

	// vlans are the VLAN IDs machines' NICs may be tagged with; a NIC without a VLAN needs no
	// entry.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	VLANs []VLANRange `json:"vlans,omitempty"`
}

// VLANRange is a range of VLAN IDs, both ends included.
// +kubebuilder:validation:XValidation:rule="!has(self.to) || self.to >= self.from",message="to must not be less than from"
type VLANRange struct {
	// from is the first VLAN ID.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	From int32 `json:"from"`
	// to is the last VLAN ID; unset: from alone.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	To int32 `json:"to,omitempty"`
}
