// Package addons builds the workload-cluster addons of the capwin cluster templates (CNI,
// kube-proxy for Windows, RuntimeClasses) and wraps them into ClusterResourceSets.
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
)

// files holds the kustomize directories of every addon.
//
//go:embed calico flannel kube-proxy-windows runtimeclasses
var files embed.FS

// LiteralDataAnnotation marks a ConfigMap whose data must reach the cluster unchanged: every "$"
// of its values is written "$$" in the template.
const LiteralDataAnnotation = "capwin.io/literal-data"

// CNILabel is the Cluster label that selects the pod network addons (calico, flannel, or none).
const CNILabel = "capwin.io/cni"

// ClusterNameLabel is the Cluster label CAPI's convention gives every object of a cluster; the
// templates set it on the Cluster so that the ClusterResourceSets select only their own cluster.
const ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

// addon is one kustomize directory and the clusters it is applied to.
type addon struct {
	name string // ConfigMap/ClusterResourceSet name suffix and data key
	dir  string // kustomize directory, relative to this package
	cni  string // value of CNILabel the cluster must have; "" for every capwin cluster
}

var addons = []addon{
	{name: "calico", dir: "calico", cni: "calico"},
	{name: "flannel", dir: "flannel", cni: "flannel"},
	{name: "kube-proxy-windows-calico", dir: "kube-proxy-windows/calico", cni: "calico"},
	{name: "kube-proxy-windows-flannel", dir: "kube-proxy-windows/flannel", cni: "flannel"},
	{name: "runtimeclasses", dir: "runtimeclasses"},
}

// Names returns the addon names, in the order ClusterResourceSets emits them.
func Names() []string {
	names := make([]string, len(addons))
	for i, a := range addons {
		names[i] = a.name
	}
	return names
}

// CNI returns the value of the Cluster label capwin.io/cni an addon is applied for, "" when it is
// applied to every capwin cluster.
func CNI(name string) (string, error) {
	a, err := find(name)
	return a.cni, err
}

// Manifests returns the multi-document manifest of one addon as it appears in the templates:
// kustomize output with ${VAR:=default} placeholders and $$-escaped literal ConfigMap data.
func Manifests(name string) ([]byte, error) {
	a, err := find(name)
	if err != nil {
		return nil, err
	}
	return build(a.dir)
}

func find(name string) (addon, error) {
	for _, a := range addons {
		if a.name == name {
			return a, nil
		}
	}
	return addon{}, fmt.Errorf("unknown addon %q", name)
}
