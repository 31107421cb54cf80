package clusterctl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/utils/ptr"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/internal/release"
	"github.com/capwin/capwin/internal/test/envtest"
)

const version = "v0.1.0"

// testValues are values for the variables that have no default, as an operator would set them.
var testValues = map[string]string{
	"CONTROL_PLANE_ENDPOINT_IP": "10.0.0.10",
	"VSPHERE_SERVER":            "vcenter.example.com",
	"VSPHERE_TLS_THUMBPRINT":    "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD",
	"VSPHERE_USERNAME":          "capwin@vsphere.local",
	"VSPHERE_PASSWORD":          "0123", // digits only: must stay a string
	"VSPHERE_DATACENTER":        "dc1",
	"VSPHERE_NETWORK":           "VM Network",
	"LINUX_TEMPLATE":            "ubuntu-2404-kube-v1.36.3",
	"WINDOWS_TEMPLATE":          "windows-2022-kube-v1.36.3",
	"HYPERV_HOSTS":              "[{name: hv1, address: hv1.corp.example}, {name: hv2, address: 10.0.0.22}]",
	"HYPERV_SWITCH":             "External",
	"HYPERV_USERNAME":           `CORP\capwin`,
	"HYPERV_PASSWORD":           "true", // a YAML boolean when unquoted: must stay a string
}

// localRepo writes a release into a clusterctl local repository and a clusterctl config that
// points at it; it returns the config path.
func localRepo(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	infra := filepath.Join(dir, "infrastructure-capwin", version)
	boot := filepath.Join(dir, "bootstrap-windows", version)
	if err := release.Write(envtest.RepoRoot(), infra); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(boot, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bootstrap-components.yaml", "metadata.yaml"} {
		if err := os.Rename(filepath.Join(infra, f), filepath.Join(boot, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyFile(filepath.Join(boot, "metadata.yaml"), filepath.Join(infra, "metadata.yaml")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{}
	for k, v := range testValues {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	vars["providers"] = []map[string]string{
		{"name": "windows", "type": "BootstrapProvider", "url": "file://" + filepath.Join(boot, "bootstrap-components.yaml")},
		{"name": "capwin", "type": "InfrastructureProvider", "url": "file://" + filepath.Join(infra, "infrastructure-components.yaml")},
	}
	b, err := yaml.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "clusterctl.yaml")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// generate runs clusterctl generate cluster win1 --flavor flavor against the local repository.
func generate(ctx context.Context, cfg, kubeconfig, namespace, flavor string, listOnly bool) (clusterctl.Template, error) {
	c, err := clusterctl.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tmpl, err := c.GetClusterTemplate(ctx, clusterctl.GetClusterTemplateOptions{
		Kubeconfig: clusterctl.Kubeconfig{Path: kubeconfig},
		ProviderRepositorySource: &clusterctl.ProviderRepositorySourceOptions{
			InfrastructureProvider: "capwin:" + version, Flavor: flavor,
		},
		ClusterName:              "win1",
		TargetNamespace:          namespace,
		KubernetesVersion:        "v1.36.3",
		ControlPlaneMachineCount: ptr.To[int64](1),
		WorkerMachineCount:       ptr.To[int64](2),
		ListVariablesOnly:        listOnly,
	})
	if err != nil {
		return nil, fmt.Errorf("clusterctl generate cluster --flavor %s: %w", flavor, err)
	}
	return tmpl, nil
}
