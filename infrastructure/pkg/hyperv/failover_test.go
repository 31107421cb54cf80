package hyperv

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

func clusteredBackend(mode infrav1.AntiAffinityMode) *backend {
	hc := &infrav1.HyperVCluster{Spec: infrav1.HyperVClusterSpec{
		FailoverCluster: &infrav1.HyperVFailoverCluster{Name: "HVCLU1", StoragePath: `C:\ClusterStorage\Volume1\capwin\`}}}
	m := &infrav1.HyperVMachine{}
	if mode != "" {
		m.Spec.AntiAffinity = &infrav1.HyperVAntiAffinity{Mode: mode}
	}
	return &backend{cluster: hc, m: m, folders: Folders(hc), hosts: map[string]HostConfig{
		"node-a": {Name: "node-a", Address: "HV-A.corp.example"}, "hv-b": {Name: "hv-b", Address: "10.0.0.12"}}}
}

// TestFailoverFolders: a failover cluster keeps the VMs and disks below its storage path on the
// CSV and names itself in every operation; the providerID names the cluster, not the node.
func TestFailoverFolders(t *testing.T) {
	b := clusteredBackend("")
	want := wire.Placement{VMPath: `C:\ClusterStorage\Volume1\capwin\vms`, DiskPath: `C:\ClusterStorage\Volume1\capwin\disks`, Cluster: "HVCLU1"}
	if b.folders != want {
		t.Errorf("folders %+v, want %+v", b.folders, want)
	}
	if got := ProviderID(b.providerHost("node-a"), "id1"); got != "hyperv://hvclu1/id1" {
		t.Errorf("providerID %s", got)
	}
	if h, id := parseProviderID("hyperv://hvclu1/id1"); h != "hvclu1" || id != "id1" {
		t.Errorf("parse: %s %s", h, id)
	}
	standalone := &backend{folders: Folders(&infrav1.HyperVCluster{})}
	if got := standalone.providerHost("hv1"); got != "hv1" {
		t.Errorf("standalone providerID host %s", got)
	}
}

// TestNodeHost: the cluster's node names map to hosts by name or by the first label of the
// address, case-insensitively; another node is an error that names it.
func TestNodeHost(t *testing.T) {
	b := clusteredBackend("")
	for node, want := range map[string]string{"HV-A": "node-a", "NODE-A": "node-a", "HV-B": "hv-b"} {
		if got, err := b.nodeHost(node); err != nil || got != want {
			t.Errorf("node %s: %q, %v; want %s", node, got, err, want)
		}
	}
	if _, err := b.nodeHost("HV-C"); err == nil || !strings.Contains(err.Error(), `node "HV-C"`) {
		t.Errorf("unknown node: %v", err)
	}
}

// TestAntiAffinityClass: a class name only for a group's machine with mode Soft or Hard on a
// failover cluster; Hard asks the cluster to enforce it; the name is the group's, as vCenter's rule.
func TestAntiAffinityClass(t *testing.T) {
	s := &hypervisor.Scope{
		Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: "ns", UID: "c-uid"}},
		Machine: &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{clusterv1.MachineDeploymentNameLabel: "md-0"}}},
	}
	class, hard := clusteredBackend(infrav1.AntiAffinitySoft).antiAffinityClass(s)
	if !strings.HasPrefix(class, "capwin-ns-win-md-md-0-") || hard || class != hypervisor.GroupName(s, maxClassName) {
		t.Errorf("soft: %q %v", class, hard)
	}
	if _, hard := clusteredBackend(infrav1.AntiAffinityHard).antiAffinityClass(s); !hard {
		t.Error("hard: not enforced")
	}
	for name, b := range map[string]*backend{"none": clusteredBackend(infrav1.AntiAffinityNone), "unset": clusteredBackend("")} {
		if class, _ := b.antiAffinityClass(s); class != "" {
			t.Errorf("%s: %q", name, class)
		}
	}
	standalone := &backend{m: &infrav1.HyperVMachine{Spec: infrav1.HyperVMachineSpec{AntiAffinity: &infrav1.HyperVAntiAffinity{Mode: infrav1.AntiAffinitySoft}}}}
	if class, _ := standalone.antiAffinityClass(s); class != "" {
		t.Errorf("standalone: %q", class)
	}
	s.Machine.Labels = nil
	if class, hard := clusteredBackend(infrav1.AntiAffinityHard).antiAffinityClass(s); class != "" || hard {
		t.Errorf("no group: %q %v", class, hard)
	}
}

// FuzzLocateOutput feeds arbitrary runner output through what capwin makes of locate.ps1's
// answer: a node is mapped to one of the HyperVCluster's hosts or refused, never invented.
func FuzzLocateOutput(f *testing.F) {
	line := func(doc string) []byte {
		return []byte(wire.ResultLine("n", []byte(doc)) + "\r\n")
	}
	f.Add(line(`{"ok":true,"result":{"found":true,"node":"HV-A","state":"Online"}}`))
	f.Add(line(`{"ok":true,"result":{"found":true,"node":"","state":"Failed"}}`))
	f.Add(line(`{"ok":true,"result":{"found":false,"node":"","state":""}}`))
	f.Add(line(`{"ok":true,"result":{"found":true,"node":["hv-b"]}}`))
	b := clusteredBackend("")
	f.Fuzz(func(t *testing.T, stdout []byte) {
		o, found, err := parseOutcome(stdout, "n")
		if err != nil || !found || !o.OK {
			return
		}
		var at wire.Located
		if json.Unmarshal(o.Result, &at) != nil || !at.Found {
			return
		}
		host, err := b.nodeHost(at.Node)
		if _, known := b.hosts[host]; (err == nil) != known {
			t.Fatalf("node %q: host %q, %v", at.Node, host, err)
		}
	})
}
