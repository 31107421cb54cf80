package clusterctl_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestComponents reads both providers' components as clusterctl init does (variables, target
// namespace, provider labels) and applies them with server-side dry run. cert-manager's kinds
// are left out: cert-manager is a prerequisite that clusterctl init installs, not part of envtest.
func TestComponents(t *testing.T) {
	cfg := localRepo(t, map[string]string{"CAPWIN_VCENTERMACHINE_CONCURRENCY": "20", "CAPWIN_HYPERVMACHINE_CONCURRENCY": "7"})
	for _, p := range capwinProviders {
		t.Run(p.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			comp := components(ctx, g, cfg, p.name, p.typ)
			if p.name == "capwin" {
				// The Hyper-V settings are clusterctl variables like the vCenter ones.
				g.Expect(comp.Variables()).To(ContainElements("CAPWIN_HYPERVMACHINE_CONCURRENCY",
					"CAPWIN_HYPERVCLUSTER_CONCURRENCY", "CAPWIN_HYPERV_HOST_RECHECK", "CAPWIN_HYPERV_GUEST_WATCH_INTERVAL", "CAPWIN_WINRM_TIMEOUT",
					"CAPWIN_WINRM_OPERATION_TIMEOUT", "CAPWIN_WINRM_LONG_OPERATION_TIMEOUT"))
				g.Expect(managerArgs(comp.Objs())).To(ContainElements("--vcentermachine-concurrency=20",
					"--hypervmachine-concurrency=7", "--hyperv-host-recheck=1m", "--hyperv-guest-watch-interval=3s", "--winrm-timeout=30s",
					"--winrm-operation-timeout=30s", "--winrm-long-operation-timeout=2m"))
			}
			g.Expect(comp.TargetNamespace()).To(Equal(p.ns))
			g.Expect(comp.Images()).NotTo(BeEmpty())
			expectCertManagerRefs(g, comp.Objs())
			inventory := comp.InventoryObject()
			kinds := map[string]int{}
			for _, o := range comp.Objs() {
				kinds[o.GetKind()]++
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", inventory.ManifestLabel()),
					"%s %s", o.GetKind(), o.GetName())
				switch o.GetKind() {
				case "CustomResourceDefinition":
					g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta2", "v1beta1"), o.GetName())
				case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
					g.Expect(o.GetAnnotations()).To(HaveKey("cert-manager.io/inject-ca-from"), o.GetName())
				}
				switch {
				case o.GroupVersionKind().Group == "cert-manager.io":
					continue
				case o.GetKind() == "CustomResourceDefinition", strings.HasSuffix(o.GetKind(), "WebhookConfiguration"):
					continue // the harness installed these from the same files (webhooks pointing at its own server)
				}
				opts := []client.ApplyOption{client.DryRunAll}
				if o.GetKind() == "Namespace" {
					opts = nil // a dry-run namespace would not hold the dry-run objects that follow
				}
				g.Expect(apply(ctx, &o, opts...)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
			}
			g.Expect(kinds).To(HaveKeyWithValue("Namespace", 1))
			g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
			g.Expect(kinds).To(HaveKey("CustomResourceDefinition"))
			g.Expect(slices.ContainsFunc(comp.Objs(), func(o unstructured.Unstructured) bool { return o.GetKind() == "Certificate" })).To(BeTrue())
		})
	}
}

// capwinProviders are capwin's two providers and their namespaces, as clusterctl init installs them.
var capwinProviders = []struct {
	name string
	typ  clusterctlv1.ProviderType
	ns   string
}{
	{"windows", clusterctlv1.BootstrapProviderType, "capwin-bootstrap-system"},
	{"capwin", clusterctlv1.InfrastructureProviderType, "capwin-infrastructure-system"},
}

// components reads a provider's components from the local repository as clusterctl init does
// (variables, target namespace, provider labels).
func components(ctx context.Context, g Gomega, cfg, name string, typ clusterctlv1.ProviderType) clusterctl.Components {
	c, err := clusterctl.New(ctx, cfg)
	g.Expect(err).NotTo(HaveOccurred())
	comp, err := c.GetProviderComponents(ctx, name+":"+version, typ, clusterctl.ComponentsOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return comp
}

// managerArgs are the args of the components' Deployment.
func managerArgs(objs []unstructured.Unstructured) []string {
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		return args
	}
	return nil
}
