package move_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// capwinVersion is the providers' version in the inventory (metadata.yaml: release series 0.1).
const capwinVersion = "v0.1.0"

// provider is one provider as `clusterctl init` installs it: its inventory entry and the
// installed CRDs that belong to it.
type provider struct {
	name, namespace, version string
	typ                      clusterctlv1.ProviderType
	owns                     func(crd *apiextensionsv1.CustomResourceDefinition) bool
}

// providers are the providers of a harness management cluster. The CRDs of CABPK and KCP that
// internal/test/envtest also installs are left out: no object of theirs exists, and without the
// clusterctl label clusterctl ignores their kinds (as it ignores any CRD it did not install).
func providers() ([]provider, error) {
	capi, err := moduleVersion("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	inGroups := func(groups ...string) func(*apiextensionsv1.CustomResourceDefinition) bool {
		return func(crd *apiextensionsv1.CustomResourceDefinition) bool {
			return slices.Contains(groups, crd.Spec.Group)
		}
	}
	// bootstrap.cluster.x-k8s.io is shared with CABPK: the windows provider owns its own kinds.
	windowsKinds := runtime.NewScheme()
	if err := bootstrapv1.AddToScheme(windowsKinds); err != nil {
		return nil, err
	}
	windows := func(crd *apiextensionsv1.CustomResourceDefinition) bool {
		_, ok := windowsKinds.KnownTypes(bootstrapv1.GroupVersion)[crd.Spec.Names.Kind]
		return crd.Spec.Group == bootstrapv1.GroupVersion.Group && ok
	}
	return []provider{
		{name: config.ClusterAPIProviderName, typ: clusterctlv1.CoreProviderType, namespace: "capi-system", version: capi,
			owns: inGroups(clusterv1.GroupVersion.Group, "addons.cluster.x-k8s.io", "ipam.cluster.x-k8s.io", "runtime.cluster.x-k8s.io")},
		{name: "windows", typ: clusterctlv1.BootstrapProviderType, namespace: "capwin-bootstrap-system", version: capwinVersion, owns: windows},
		// The harness's TestControlPlane: a Cluster's control plane object moves with it only
		// if clusterctl knows its kind.
		{name: "harness", typ: clusterctlv1.ControlPlaneProviderType, namespace: "capwin-harness-system", version: capwinVersion,
			owns: inGroups(management.ControlPlaneGVK.Group)},
		{name: "capwin", typ: clusterctlv1.InfrastructureProviderType, namespace: "capwin-infrastructure-system", version: capwinVersion,
			owns: inGroups(infrav1.GroupVersion.Group)},
	}, nil
}

// moduleVersion is the version of one of capwin's dependencies (a test binary carries no
// module information).
func moduleVersion(path string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", path)
	cmd.Dir = envtest.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", path, err)
	}
	if v := strings.TrimSpace(string(out)); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("go list -m %s: no version", path)
}

// writeClusterctlConfig writes an empty clusterctl configuration, so the developer's
// ~/.config/cluster-api/clusterctl.yaml never changes what the test does.
func writeClusterctlConfig(dir string) (string, error) {
	path := filepath.Join(dir, "clusterctl.yaml")
	return path, os.WriteFile(path, []byte("# move reads no provider repository\n{}\n"), 0o600)
}

// clusterctlInit leaves a management cluster as `clusterctl init` would, with clusterctl's own
// code: the inventory CRD (EnsureCustomResourceDefinitions), and for every provider its
// components built by repository.NewComponents from the CRDs that are installed (which adds
// the labels clusterctl.cluster.x-k8s.io and cluster.x-k8s.io/provider=<type>-<name> and the
// provider namespace) and installed with the ProviderInstaller (objects + inventory Provider
// entry). The controllers themselves already run in the test process.
func clusterctlInit(ctx context.Context, kubeconfig string, cfg config.Client, c crclient.Client) error {
	cl := cluster.New(cluster.Kubeconfig{Path: kubeconfig}, cfg)
	if err := cl.ProviderInventory().EnsureCustomResourceDefinitions(ctx); err != nil {
		return fmt.Errorf("inventory CRD: %w", err)
	}
	ps, err := providers()
	if err != nil {
		return err
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return err
	}
	installer := cl.ProviderInstaller()
	for _, p := range ps {
		var docs []string
		for i := range crds.Items {
			crd := &crds.Items[i]
			if !p.owns(crd) {
				continue
			}
			doc, err := manifest(crd)
			if err != nil {
				return err
			}
			docs = append(docs, doc)
		}
		if len(docs) == 0 {
			return fmt.Errorf("provider %s: no CRD installed", p.name)
		}
		comps, err := repository.NewComponents(repository.ComponentsInput{
			Provider: config.NewProvider(p.name, "", p.typ), ConfigClient: cfg, Processor: yamlprocessor.NewSimpleProcessor(),
			RawYaml: []byte(strings.Join(docs, "---\n")),
			Options: repository.ComponentsOptions{Version: p.version, TargetNamespace: p.namespace, SkipTemplateProcess: true},
		})
		if err != nil {
			return fmt.Errorf("provider %s: %w", p.name, err)
		}
		installer.Add(comps)
	}
	if _, err := installer.Install(ctx, cluster.InstallOptions{}); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

// manifest is a CRD as a provider's components YAML carries it (no server-set fields).
func manifest(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	clean := &apiextensionsv1.CustomResourceDefinition{Spec: crd.Spec}
	clean.APIVersion, clean.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	clean.Name, clean.Labels, clean.Annotations = crd.Name, crd.Labels, crd.Annotations
	out, err := yaml.Marshal(clean)
	if err != nil {
		return "", err
	}
	// status is required by the type; the components YAML of a provider has none.
	var obj map[string]any
	if err := yaml.Unmarshal(out, &obj); err != nil {
		return "", err
	}
	delete(obj, "status")
	if m, ok := obj["metadata"].(map[string]any); ok {
		delete(m, "creationTimestamp")
	}
	out, err = yaml.Marshal(obj)
	return string(out), err
}
