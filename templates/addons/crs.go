package addons

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ClusterResourceSets returns, for every addon, a ConfigMap named ${CLUSTER_NAME}-<addon> whose
// key <addon>.yaml holds the addon's manifest, and an ApplyOnce ClusterResourceSet of the same
// name that applies it to this cluster when its capwin.io/cni label matches. The objects have no
// namespace: clusterctl puts them in the target namespace. The text is template text, to be
// appended to a cluster template.
func ClusterResourceSets() ([]byte, error) {
	var out bytes.Buffer
	for i, a := range addons {
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
	cm, err := yaml.Parse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-%s\n", a.name))
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

// clusterResourceSet applies the addon's ConfigMap once to the cluster named CLUSTER_NAME (the
// objects of two clusters in one namespace must not select each other's Cluster) that uses the
// addon's CNI, or that is any capwin cluster (has the CNI label) for CNI-independent addons.
func clusterResourceSet(a addon) string {
	selector := fmt.Sprintf("    matchLabels:\n      %s: ${CLUSTER_NAME}\n", ClusterNameLabel)
	if a.cni != "" {
		selector += fmt.Sprintf("      %s: %s\n", CNILabel, a.cni)
	} else {
		selector += fmt.Sprintf("    matchExpressions:\n    - key: %s\n      operator: Exists\n", CNILabel)
	}
	return fmt.Sprintf(`apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata:
  name: ${CLUSTER_NAME}-%[1]s
spec:
  strategy: ApplyOnce
  clusterSelector:
%[2]s  resources:
  - kind: ConfigMap
    name: ${CLUSTER_NAME}-%[1]s
`, a.name, selector)
}
