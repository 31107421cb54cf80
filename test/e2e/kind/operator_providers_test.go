//go:build e2e

package kind

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
)

// The Cluster API Operator's API and the names its offline path reads (its api/v1alpha2).
const (
	operatorAPIVersion   = "operator.cluster.x-k8s.io/v1alpha2"
	operatorVersionLabel = "provider.cluster.x-k8s.io/version"    // a ConfigMap's provider version
	operatorCompressed   = "provider.cluster.x-k8s.io/compressed" // "true": components gzipped in binaryData
	// operatorProviderLabel is the label the provider objects select their ConfigMaps by (as in
	// docs/install.md: the provider's clusterctl label, such as infrastructure-capwin).
	operatorProviderLabel = "capwin.io/provider"
	// operatorVariables is the Secret of clusterctl variables the provider objects name (configSecret).
	operatorVariables = "capwin-e2e-operator-variables"
	// compressAbove: a ConfigMap holds at most 1 MiB; larger components go gzipped, as the
	// operator's plugin does (Cluster API's core components are about 1.1 MB).
	compressAbove = 900 << 10
)

// operatorProvider is one provider the operator spec installs: the operator's kind for it, its
// clusterctl name, the newest version in the suite's local clusterctl repository and the
// namespace its components install into.
type operatorProvider struct {
	kind, name, folder, version, namespace string
	components, metadata                   []byte
}

// operatorProviders reads the five providers of the suite's management cluster from the local
// clusterctl repository the suite wrote (the same files clusterctl init installs: for capwin,
// `make release` output with the e2e config's image replacements), in install order: core first.
func operatorProviders(repository string) []operatorProvider {
	ps := []operatorProvider{
		{kind: "CoreProvider", name: "cluster-api", folder: "cluster-api"},
		{kind: "BootstrapProvider", name: "kubeadm", folder: "bootstrap-kubeadm"},
		{kind: "ControlPlaneProvider", name: "kubeadm", folder: "control-plane-kubeadm"},
		{kind: "BootstrapProvider", name: windowsBootstrapProvider, folder: "bootstrap-windows"},
		{kind: "InfrastructureProvider", name: capwinProvider, folder: "infrastructure-" + capwinProvider},
	}
	for i := range ps {
		p := &ps[i]
		p.version = newestVersion(filepath.Join(repository, p.folder))
		dir := filepath.Join(repository, p.folder, p.version)
		var err error
		p.components, err = os.ReadFile(filepath.Join(dir, "components.yaml")) //nolint:gosec // the suite's local repository
		Expect(err).ToNot(HaveOccurred())
		p.metadata, err = os.ReadFile(filepath.Join(dir, "metadata.yaml")) //nolint:gosec // the suite's local repository
		Expect(err).ToNot(HaveOccurred())
		p.namespace = componentsNamespace(p.components)
	}
	return ps
}

// newestVersion is the highest semantic version among dir's subfolders.
func newestVersion(dir string) string {
	entries, err := os.ReadDir(dir)
	Expect(err).ToNot(HaveOccurred())
	var newest *version.Version
	for _, e := range entries {
		if v, err := version.ParseSemantic(e.Name()); err == nil && (newest == nil || v.GreaterThan(newest)) {
			newest = v
		}
	}
	Expect(newest).ToNot(BeNil(), "no version folder in %s", dir)
	return "v" + newest.String()
}

// componentsNamespace is the name of the one Namespace a provider's components create.
func componentsNamespace(components []byte) string {
	objs, err := utilyaml.ToUnstructured(components)
	Expect(err).ToNot(HaveOccurred())
	var names []string
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			names = append(names, o.GetName())
		}
	}
	Expect(names).To(HaveLen(1), "Namespaces of the components")
	return names[0]
}

// configMap is the provider's components and metadata as the operator's offline path reads them:
// one ConfigMap per version in the provider's namespace, version in the label, components gzipped
// when they would not fit.
func (p operatorProvider) configMap() *corev1.ConfigMap {
	cm := p.configMapRef()
	cm.Labels = map[string]string{operatorProviderLabel: p.folder, operatorVersionLabel: p.version}
	cm.Data = map[string]string{"metadata": string(p.metadata)}
	if len(p.components) <= compressAbove {
		cm.Data["components"] = string(p.components)
		return cm
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write(p.components)
	Expect(err).ToNot(HaveOccurred())
	Expect(w.Close()).To(Succeed())
	cm.Annotations = map[string]string{operatorCompressed: "true"}
	cm.BinaryData = map[string][]byte{"components": b.Bytes()}
	return cm
}

// configMapRef is the provider's ConfigMap by name only (what a delete needs, without its data).
func (p operatorProvider) configMapRef() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: p.name + "-" + p.version, Namespace: p.namespace}}
}

// object is the operator's provider object for p: its version, the ConfigMaps it is fetched from
// and the Secret of clusterctl variables.
func (p operatorProvider) object(variablesNamespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"version":      p.version,
			"configSecret": map[string]any{"name": operatorVariables, "namespace": variablesNamespace},
			"fetchConfig":  map[string]any{"selector": map[string]any{"matchLabels": map[string]any{operatorProviderLabel: p.folder}}},
		},
	}}
	u.SetAPIVersion(operatorAPIVersion)
	u.SetKind(p.kind)
	u.SetNamespace(p.namespace)
	u.SetName(p.name)
	return u
}

// variableRef finds the names of the clusterctl variables a components file uses.
var variableRef = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)`)

// operatorVariablesSecret holds the e2e config's value of every variable the providers'
// components use: what clusterctl init substitutes from its config, the operator takes from
// spec.configSecret.
func operatorVariablesSecret(config *clusterctl.E2EConfig, namespace string, ps []operatorProvider) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: operatorVariables, Namespace: namespace}, StringData: map[string]string{}}
	for _, p := range ps {
		for _, m := range variableRef.FindAllSubmatch(p.components, -1) {
			if name := string(m[1]); config.HasVariable(name) {
				s.StringData[name] = config.MustGetVariable(name)
			}
		}
	}
	return s
}

// providerReady reports whether the operator installed the provider object's version: condition
// Ready true and status.installedVersion set to it; else it returns the object's conditions.
func providerReady(ctx context.Context, c client.Client, p operatorProvider) (bool, string) {
	u := p.object("")
	if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return false, err.Error()
	}
	installed, _, _ := unstructured.NestedString(u.Object, "status", "installedVersion")
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	ready := false
	var summary []string
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		summary = append(summary, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
		if m["type"] == "Ready" && m["status"] == "True" {
			ready = true
		}
	}
	sort.Strings(summary)
	return ready && installed == p.version, "installed " + installed + "; " + strings.Join(summary, "; ")
}
