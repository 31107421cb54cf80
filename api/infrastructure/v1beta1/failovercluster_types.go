package v1beta1

import "strings"

// HyperVFailoverCluster names the Windows Server failover cluster whose nodes are a HyperVCluster's
// hosts. capwin then creates every VM on a Cluster Shared Volume and registers it as a highly
// available role of the cluster, which moves it to another node on a node failure (or a live
// migration); capwin follows the VM there.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="failoverCluster cannot change: VMs are registered with the cluster and stored under storagePath"
type HyperVFailoverCluster struct {
	// name is the failover cluster's name (its network name, as Get-Cluster reports it on every
	// node). Each of spec.hosts must be a node of this cluster, and its name (or the first label
	// of its address) must be the node's name (case-insensitive).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9]*$`
	Name string `json:"name"`

	// storagePath is the folder on a Cluster Shared Volume where capwin keeps the VMs'
	// configurations (storagePath\vms) and disks (storagePath\disks), instead of vmPath and
	// diskPath: C:\ClusterStorage\<volume>\<folder>..., e.g. C:\ClusterStorage\Volume1\capwin.
	// Every node sees it at the same path.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:XValidation:rule=`self.lowerAscii().matches('^c:\\\\clusterstorage\\\\[^\\\\]+\\\\[^\\\\].*$')`,message=`storagePath must be a folder on a Cluster Shared Volume: C:\ClusterStorage\<volume>\<folder>`
	StoragePath string `json:"storagePath"`
}

// HyperVAntiAffinity asks a failover cluster to keep the VMs of one MachineDeployment (or control
// plane) on different nodes, through the AntiAffinityClassNames of their cluster roles. On hosts
// without a failover cluster it has no effect: capwin's placement spreads a MachineDeployment over
// the hosts anyway.
type HyperVAntiAffinity struct {
	// mode is None (no class name), Soft (the group's roles share an AntiAffinityClassNames entry:
	// the cluster avoids one node for two of them when it can) or Hard (the same, and the create
	// fails unless the cluster enforces anti-affinity, ClusterEnforceAntiAffinity = 1, which then
	// leaves a role offline rather than put it beside another of its class).
	// +kubebuilder:default=None
	// +optional
	Mode AntiAffinityMode `json:"mode,omitempty"`
}

// CSVRoot is the folder under which Windows mounts every Cluster Shared Volume.
const CSVRoot = `C:\ClusterStorage\`

// OnClusterSharedVolume reports whether p is a folder below a volume of C:\ClusterStorage.
func OnClusterSharedVolume(p string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(strings.ReplaceAll(p, "/", `\`)), strings.ToLower(CSVRoot))
	if !ok {
		return false
	}
	volume, folder, _ := strings.Cut(rest, `\`)
	return volume != "" && strings.Trim(folder, `\`) != ""
}
