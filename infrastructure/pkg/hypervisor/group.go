package hypervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// GroupName names the anti-affinity group of a machine (a vSphere DRS rule, a failover cluster's
// anti-affinity class): "" when the Machine belongs to no MachineDeployment, MachineSet or
// control plane. The name is deterministic (the Cluster's UID and the group) and readable
// (namespace, cluster, group), cut to maxLen with the hash kept.
func GroupName(s *Scope, maxLen int) string {
	if s.Machine == nil || s.Cluster == nil {
		return ""
	}
	group := MachineGroup(s.Machine.Labels)
	if group == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(string(s.Cluster.UID) + "/" + group))
	hash := hex.EncodeToString(sum[:])[:10]
	readable := strings.Join([]string{"capwin", s.Cluster.Namespace, s.Cluster.Name, group}, "-")
	return readable[:min(len(readable), maxLen-len(hash)-1)] + "-" + hash
}

// MachineGroup is the group a Machine's labels put it in: its MachineDeployment, else its
// control plane, else its MachineSet ("" for none).
func MachineGroup(labels map[string]string) string {
	switch {
	case labels[clusterv1.MachineDeploymentNameLabel] != "":
		return "md-" + labels[clusterv1.MachineDeploymentNameLabel]
	case labels[clusterv1.MachineControlPlaneNameLabel] != "":
		return "cp-" + labels[clusterv1.MachineControlPlaneNameLabel]
	case hasKey(labels, clusterv1.MachineControlPlaneLabel):
		return "cp"
	case labels[clusterv1.MachineSetNameLabel] != "":
		return "ms-" + labels[clusterv1.MachineSetNameLabel]
	}
	return ""
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
