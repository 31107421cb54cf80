package v1beta1

// HostGroupMode says whether the VMs of a failure domain must or should run on the hosts of its
// DRS host group.
// +kubebuilder:validation:Enum=Must;Should
type HostGroupMode string

// Host group modes.
const (
	// HostGroupMust is a mandatory DRS VM-Host rule: the VMs run only on the group's hosts (vSphere
	// HA does not restart them elsewhere, and a host of the group cannot enter maintenance mode
	// while no other host of the group can take its VMs).
	HostGroupMust HostGroupMode = "Must"
	// HostGroupShould is a preferential DRS VM-Host rule: DRS keeps the VMs on the group's hosts
	// when it can, and vSphere HA may restart them elsewhere.
	HostGroupShould HostGroupMode = "Should"
)

// VCenterHostGroup ties the VMs of a failure domain to a DRS host group of their compute cluster.
// capwin keeps a DRS VM group of the domain's VMs and a VM-Host rule from it to this host group,
// and removes both when the domain's last VM is deleted. The host group itself is the
// administrator's: capwin never creates, changes or deletes it.
type VCenterHostGroup struct {
	// name of an existing DRS host group in the compute cluster of the domain's resource pool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	Name string `json:"name"`

	// mode is Should (the default: a preferential rule) or Must (a mandatory rule).
	// +kubebuilder:default=Should
	// +optional
	Mode HostGroupMode `json:"mode,omitempty"`
}

// hostGroupMode returns the group's mode, Should when unset.
func (g *VCenterHostGroup) hostGroupMode() HostGroupMode {
	if g.Mode == "" {
		return HostGroupShould
	}
	return g.Mode
}

// Mandatory is true when the VM-Host rule must be a "must" rule.
func (g *VCenterHostGroup) Mandatory() bool { return g.hostGroupMode() == HostGroupMust }

// FailureDomain returns the failure domain named name (nil: none).
func (s *VCenterClusterSpec) FailureDomain(name string) *VCenterFailureDomain {
	for i := range s.FailureDomains {
		if s.FailureDomains[i].Name == name && name != "" {
			return &s.FailureDomains[i]
		}
	}
	return nil
}

// FailureDomain returns the Hyper-V failure domain named name (nil: none).
func (s *HyperVClusterSpec) FailureDomain(name string) *HyperVFailureDomain {
	for i := range s.FailureDomains {
		if s.FailureDomains[i].Name == name && name != "" {
			return &s.FailureDomains[i]
		}
	}
	return nil
}

// SwitchFor is the virtual switch a NIC naming no switch connects to on host: its failure
// domain's virtualSwitch when that sets one, else the cluster's.
func (s *HyperVClusterSpec) SwitchFor(host string) string {
	for _, h := range s.Hosts {
		if h.Name != host {
			continue
		}
		if fd := s.FailureDomain(h.FailureDomain); fd != nil && fd.VirtualSwitch != "" {
			return fd.VirtualSwitch
		}
	}
	return s.VirtualSwitch
}
