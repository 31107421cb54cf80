// Package addons builds the workload-cluster addons of the capwin cluster templates (CNI,
// kube-proxy for Windows, RuntimeClasses, optional storage, gMSA and node metrics) and wraps them into
// ClusterResourceSets: a template carries only the addons of its own pod network and
// infrastructure.
//
// The manifests live next to this file as kustomize directories. Their output is clusterctl
// template text: user settings are ${VAR:=default} placeholders and a literal dollar sign is
// written $$, because clusterctl runs envsubst over the whole template. Scripts are kept as plain
// files; the ConfigMaps generated from them carry the annotation capwin.io/literal-data: "true"
// and their dollar signs are escaped here, so that after clusterctl they equal the files.
package addons

import (
	"embed"
	"fmt"
	"slices"
)

// files holds the kustomize directories of every addon.
//
//go:embed calico flannel gmsa installer kube-proxy-windows monitoring node-health runtimeclasses servicemonitor storage
var files embed.FS

// LiteralDataAnnotation marks a ConfigMap whose data must reach the cluster unchanged: every "$"
// of its values is written "$$" in the template.
const LiteralDataAnnotation = "capwin.io/literal-data"

// CNILabel is the Cluster label that names the flavor's pod network (calico or flannel). The
// generator reads it to append only that network's addons; it is informational on the Cluster.
const CNILabel = "capwin.io/cni"

// StorageLabel is the Cluster label that turns on the optional storage addon of the cluster's
// infrastructure (value "true").
const StorageLabel = "capwin.io/storage"

// GMSALabel is the Cluster label that turns on the optional gMSA addon (value "true"): the
// Windows gMSA admission webhook and the GMSACredentialSpec CRD.
const GMSALabel = "capwin.io/gmsa"

// MonitoringLabel is the Cluster label that turns on the optional node metrics addon (value
// "true"): windows_exporter on every Windows node, its firewall rule and a Service.
const MonitoringLabel = "capwin.io/monitoring"

// ServiceMonitorLabel is the Cluster label that adds the Prometheus Operator ServiceMonitor of the
// node metrics (value "true"; the cluster must have the Prometheus Operator's CRDs).
const ServiceMonitorLabel = "capwin.io/service-monitor"

// AddonLabel names the addon on each ConfigMap and ClusterResourceSet, so one addon can be
// re-applied from a newly generated file with kubectl apply -l capwin.io/addon=NAME.
const AddonLabel = "capwin.io/addon"

// ClusterNameLabel is the Cluster label CAPI's convention gives every object of a cluster; the
// templates set it on the Cluster so that the ClusterResourceSets select only their own cluster.
const ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

// Infrastructures the addons are for.
const (
	VCenter = "vcenter"
	HyperV  = "hyperv"
)

// addon is one kustomize directory and the clusters it is applied to.
type addon struct {
	name      string // ConfigMap/ClusterResourceSet name suffix and data key
	dir       string // kustomize directory, relative to this package
	cni       string // pod network the addon belongs to; "" for every cluster
	infra     string // infrastructure the addon belongs to; "" for every cluster
	label     string // optional addon: applied only to a Cluster with this label set to "true"
	reconcile bool   // ClusterResourceSet strategy Reconcile: a changed ConfigMap is applied again
}

var addons = []addon{
	{name: "calico", dir: "calico", cni: "calico"},
	{name: "flannel", dir: "flannel", cni: "flannel"},
	// Reconcile: the DaemonSet of a new Kubernetes version is added by re-applying the ConfigMap.
	{name: "kube-proxy-windows", dir: "kube-proxy-windows/calico", cni: "calico", reconcile: true},
	{name: "kube-proxy-windows", dir: "kube-proxy-windows/flannel", cni: "flannel", reconcile: true},
	{name: "runtimeclasses", dir: "runtimeclasses"},
	// The node health checker: its Node conditions are what the flavors' MachineHealthCheck reads.
	{name: "node-health", dir: "node-health/calico", cni: "calico"},
	{name: "node-health", dir: "node-health/flannel", cni: "flannel"},
	{name: "storage", dir: "storage/vcenter", infra: VCenter, label: StorageLabel},
	{name: "storage", dir: "storage/hyperv", infra: HyperV, label: StorageLabel},
	{name: "gmsa", dir: "gmsa", label: GMSALabel},
	{name: "windows-exporter", dir: "monitoring", label: MonitoringLabel},
	{name: "windows-exporter-servicemonitor", dir: "servicemonitor", label: ServiceMonitorLabel},
}

// Selection is what a cluster template is built for: its pod network and infrastructure.
type Selection struct {
	CNI            string // calico or flannel
	Infrastructure string // VCenter or HyperV
}

// CNIs are the pod networks a flavor can carry.
var CNIs = []string{"calico", "flannel"}

// selected returns the addons of one selection, in ClusterResourceSets order.
func selected(s Selection) ([]addon, error) {
	if !slices.Contains(CNIs, s.CNI) {
		return nil, fmt.Errorf("unknown CNI %q (want one of %v)", s.CNI, CNIs)
	}
	if s.Infrastructure != VCenter && s.Infrastructure != HyperV {
		return nil, fmt.Errorf("unknown infrastructure %q", s.Infrastructure)
	}
	var out []addon
	for _, a := range addons {
		if (a.cni == "" || a.cni == s.CNI) && (a.infra == "" || a.infra == s.Infrastructure) {
			out = append(out, a)
		}
	}
	return out, nil
}

// Selections are every combination of CNI and infrastructure.
func Selections() []Selection {
	var out []Selection
	for _, infra := range []string{VCenter, HyperV} {
		for _, cni := range CNIs {
			out = append(out, Selection{CNI: cni, Infrastructure: infra})
		}
	}
	return out
}

// Names returns the addon names of a selection, in the order ClusterResourceSets emits them.
func Names(s Selection) ([]string, error) {
	list, err := selected(s)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(list))
	for i, a := range list {
		names[i] = a.name
	}
	return names, nil
}

// Manifests returns the multi-document manifest of one addon of a selection as it appears in the
// templates: kustomize output with ${VAR:=default} placeholders and $$-escaped literal data.
func Manifests(s Selection, name string) ([]byte, error) {
	a, err := find(s, name)
	if err != nil {
		return nil, err
	}
	return build(a.dir)
}

func find(s Selection, name string) (addon, error) {
	list, err := selected(s)
	if err != nil {
		return addon{}, err
	}
	for _, a := range list {
		if a.name == name {
			return a, nil
		}
	}
	return addon{}, fmt.Errorf("no addon %q for %+v", name, s)
}
