package release

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capwin/capwin/templates/addons"
)

// Flavors are the cluster templates, by flavor name (templates/flavors/<name>): each
// infrastructure and cluster shape with Calico, and the same with flannel.
var Flavors = []string{"windows", "hyperv-windows", "windows-topology",
	"windows-flannel", "hyperv-windows-flannel", "windows-topology-flannel"}

// ClusterClasses are the ClusterClasses, by name (templates/clusterclass/<name>).
var ClusterClasses = []string{"windows"}

// TemplateFile and ClusterClassFile are the file names clusterctl looks for.
func TemplateFile(flavor string) string   { return "cluster-template-" + flavor + ".yaml" }
func ClusterClassFile(name string) string { return "clusterclass-" + name + ".yaml" }

const kubeVipPath = "/etc/kubernetes/manifests/kube-vip.yaml"

// Templates returns every cluster template and ClusterClass by file name.
func Templates(root string) (map[string][]byte, error) {
	vars, err := loadVariables(root)
	if err != nil {
		return nil, err
	}
	return templates(root, vars)
}

func templates(root string, vars variables) (map[string][]byte, error) {
	kubeVip, err := kubeVipManifest(root)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range Flavors {
		objs, err := build(root, filepath.Join("templates", "flavors", f))
		if err != nil {
			return nil, err
		}
		for _, kcp := range find(objs, "KubeadmControlPlane") {
			if err := addKubeVip(kcp, kubeVip); err != nil {
				return nil, err
			}
		}
		for _, o := range objs {
			quoteLabels(o.YNode())
		}
		sel, err := selection(objs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crs, err := addons.ClusterResourceSets(sel)
		if err != nil {
			return nil, fmt.Errorf("%s: addons: %w", f, err)
		}
		body, err := encode(objs)
		if err != nil {
			return nil, err
		}
		body = append(append(addons.ExplicitIndent(body), "---\n"...), crs...)
		title := fmt.Sprintf("clusterctl generate cluster NAME --flavor %s", f)
		if out[TemplateFile(f)], err = vars.withHeader(title, body); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	for _, name := range ClusterClasses {
		body, err := clusterClass(root, name, kubeVip)
		if err != nil {
			return nil, fmt.Errorf("clusterclass %s: %w", name, err)
		}
		title := fmt.Sprintf("ClusterClass %q, used by the windows-topology flavor", name)
		if out[ClusterClassFile(name)], err = vars.withHeader(title, body); err != nil {
			return nil, fmt.Errorf("clusterclass %s: %w", name, err)
		}
	}
	return out, nil
}

// quoteLabels double-quotes every label value holding a clusterctl variable: a label is always a
// string, and kustomize drops the source's quotes when a flavor patches the object, so "false"
// would become a boolean after substitution.
func quoteLabels(n *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Kind == yaml.MappingNode && n.Content[i].Value == "labels" && n.Content[i+1].Kind == yaml.MappingNode {
			labels := n.Content[i+1].Content
			for j := 1; j < len(labels); j += 2 {
				if strings.Contains(labels[j].Value, "${") {
					labels[j].Style = yaml.DoubleQuotedStyle
				}
			}
		}
	}
	for _, c := range n.Content {
		quoteLabels(c)
	}
}

// selection is the addons a flavor gets: the pod network its Cluster is labelled with, and the
// infrastructure of its Cluster (a topology Cluster's class "windows" is vCenter).
func selection(objs []*yaml.RNode) (addons.Selection, error) {
	cluster, err := only(objs, "Cluster")
	if err != nil {
		return addons.Selection{}, err
	}
	sel := addons.Selection{CNI: cluster.GetLabels()[addons.CNILabel], Infrastructure: addons.VCenter}
	kind, err := cluster.Pipe(yaml.Lookup("spec", "infrastructureRef", "kind"))
	if err != nil {
		return addons.Selection{}, err
	}
	if kind != nil && strings.HasPrefix(yaml.GetValue(kind), "HyperV") {
		sel.Infrastructure = addons.HyperV
	}
	return sel, nil
}

// WriteTemplates writes the templates into templates/ (checked in, verified by make verify-generate).
func WriteTemplates(root string) error {
	vars, err := loadVariables(root)
	if err != nil {
		return err
	}
	files, err := templates(root, vars)
	if err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, "templates", name), body, 0o644); err != nil {
			return err
		}
	}
	doc, err := variablesDoc(vars, files)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "docs", "variables.md"), []byte(doc), 0o644)
}

// kubeVipManifest is templates/kube-vip.yaml without its leading comment.
func kubeVipManifest(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "templates", "kube-vip.yaml")) //nolint:gosec // G304: a file of the checkout the release is made from
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(string(b), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
		lines = lines[1:]
	}
	return strings.Join(lines, ""), nil
}

// kubeVipFile is the kubeadm file entry that writes the static pod.
func kubeVipFile(content string) (*yaml.RNode, error) {
	file, err := yaml.Parse(fmt.Sprintf("path: %s\nowner: root:root\npermissions: \"0644\"\n", kubeVipPath))
	if err != nil {
		return nil, err
	}
	c := yaml.NewScalarRNode(content)
	c.YNode().Style = yaml.LiteralStyle
	return file, file.PipeE(yaml.SetField("content", c))
}

// addKubeVip appends the kube-vip static pod to a KubeadmControlPlane's files.
func addKubeVip(kcp *yaml.RNode, manifest string) error {
	file, err := kubeVipFile(manifest)
	if err != nil {
		return err
	}
	files, err := kcp.Pipe(yaml.LookupCreate(yaml.SequenceNode, "spec", "kubeadmConfigSpec", "files"))
	if err != nil {
		return err
	}
	return files.PipeE(yaml.Append(file.YNode()))
}
