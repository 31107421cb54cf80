package addons

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ClusterResourceSets returns, for every addon of a selection, a ConfigMap named
// ${CLUSTER_NAME}-<addon> whose key <addon>.yaml holds the addon's manifest, and a
// ClusterResourceSet of the same name that applies it to this cluster. The objects have no
// namespace: clusterctl puts them in the target namespace. The text is template text, to be
// appended to a cluster template.
func ClusterResourceSets(s Selection) ([]byte, error) {
	list, err := selected(s)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for i, a := range list {
		body, err := build(a.dir)
		if err != nil {
			return nil, err
		}
		cm, err := configMap(a, body)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.WriteString(cm)
		out.WriteString("---\n")
		out.WriteString(clusterResourceSet(a))
	}
	return out.Bytes(), nil
}

// configMap holds an addon's manifest as a literal block, so the template stays readable and
// clusterctl's substitutions land inside the text unchanged.
func configMap(a addon, body []byte) (string, error) {
	cm, err := yaml.Parse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-%[1]s\n  labels:\n    %[2]s: %[1]s\n", a.name, AddonLabel))
	if err != nil {
		return "", err
	}
	manifest := yaml.NewStringRNode(string(body))
	manifest.YNode().Style = yaml.LiteralStyle
	if err := cm.PipeE(yaml.LookupCreate(yaml.MappingNode, "data"), yaml.SetField(a.name+".yaml", manifest)); err != nil {
		return "", err
	}
	return cm.String()
}

// clusterResourceSet applies the addon's ConfigMap to the cluster named CLUSTER_NAME only (the
// objects of two clusters in one namespace must not select each other's Cluster); an optional
// addon also needs its Cluster label (StorageLabel, GMSALabel) set to "true".
func clusterResourceSet(a addon) string {
	selector := fmt.Sprintf("      %s: ${CLUSTER_NAME}\n", ClusterNameLabel)
	if a.label != "" {
		selector += fmt.Sprintf("      %s: \"true\"\n", a.label)
	}
	strategy := "ApplyOnce"
	if a.reconcile {
		strategy = "Reconcile"
	}
	return fmt.Sprintf(`apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata:
  name: ${CLUSTER_NAME}-%[1]s
  labels:
    %[4]s: %[1]s
spec:
  strategy: %[2]s
  clusterSelector:
    matchLabels:
%[3]s  resources:
  - kind: ConfigMap
    name: ${CLUSTER_NAME}-%[1]s
`, a.name, strategy, selector, AddonLabel)
}
