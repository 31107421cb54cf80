package release

import (
	"fmt"
	"path/filepath"
	"regexp"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// classVariables maps the clusterctl variables of templates/kube-vip.yaml to ClusterClass
// variables ("" = the variable's default, which the class does not expose).
var classVariables = map[string]string{
	"CONTROL_PLANE_ENDPOINT_IP": "{{ .controlPlaneEndpointIP }}",
	"KUBE_VIP_IMAGE":            "{{ .kubeVipImage }}",
	"VIP_NETWORK_INTERFACE":     "",
}

var clusterctlVariable = regexp.MustCompile(`\$\{([A-Z0-9_]+)(:=[^}]*)?\}`)

// clusterClass builds templates/clusterclass/<name>: the KubeadmControlPlaneTemplate gets the
// kubeadmConfigSpec of templates/base (without its users), and the ClusterClass's
// kube-vip patch gets the static pod of templates/kube-vip.yaml with class variables.
func clusterClass(root, name, kubeVip string) ([]byte, error) {
	objs, err := build(root, filepath.Join("templates", "clusterclass", name))
	if err != nil {
		return nil, err
	}
	base, err := build(root, filepath.Join("templates", "base"))
	if err != nil {
		return nil, err
	}
	kcp, err := only(base, "KubeadmControlPlane")
	if err != nil {
		return nil, err
	}
	spec, err := kcp.Pipe(yaml.Lookup("spec", "kubeadmConfigSpec"))
	if err != nil || spec == nil {
		return nil, fmt.Errorf("templates/base: KubeadmControlPlane has no kubeadmConfigSpec")
	}
	spec = spec.Copy()
	// The flavors' users come from clusterctl variables; the class patches its own (linux-ssh-keys).
	if err := spec.PipeE(yaml.Clear("users")); err != nil {
		return nil, err
	}
	tmpl, err := only(objs, "KubeadmControlPlaneTemplate")
	if err != nil {
		return nil, err
	}
	if err := tmpl.PipeE(yaml.Lookup("spec", "template", "spec"), yaml.SetField("kubeadmConfigSpec", spec)); err != nil {
		return nil, err
	}
	if err := fillKubeVipPatch(objs, kubeVip); err != nil {
		return nil, err
	}
	return encode(objs)
}

// fillKubeVipPatch sets the template of the ClusterClass patch "kube-vip".
func fillKubeVipPatch(objs []*yaml.RNode, kubeVip string) error {
	var unknown []string
	content := clusterctlVariable.ReplaceAllStringFunc(kubeVip, func(m string) string {
		name := clusterctlVariable.FindStringSubmatch(m)[1]
		v, ok := classVariables[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return v
	})
	if len(unknown) > 0 {
		return fmt.Errorf("templates/kube-vip.yaml: no ClusterClass variable for %v", unknown)
	}
	file, err := kubeVipFile(content)
	if err != nil {
		return err
	}
	list := yaml.NewListRNode()
	if err := list.PipeE(yaml.Append(file.YNode())); err != nil {
		return err
	}
	text, err := list.String()
	if err != nil {
		return err
	}
	cc, err := only(objs, "ClusterClass")
	if err != nil {
		return err
	}
	patch, err := cc.Pipe(yaml.Lookup("spec", "patches"), yaml.ElementMatcher{Keys: []string{"name"}, Values: []string{"kube-vip"}},
		yaml.Lookup("definitions", "0", "jsonPatches", "0", "valueFrom"))
	if err != nil || patch == nil {
		return fmt.Errorf("ClusterClass has no patch kube-vip with a valueFrom")
	}
	v := yaml.NewScalarRNode(text)
	v.YNode().Style = yaml.LiteralStyle
	return patch.PipeE(yaml.SetField("template", v))
}
