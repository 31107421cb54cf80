//go:build e2e

package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
)

// simHealthPort serves the simulator's /hyperv/vms (test/e2e/kind/sim, --health-addr).
const simHealthPort = 8081

// vmStates records every VM the provider created, by key (vmKey), as a string that changes when
// the VM's configuration does: vcsim's config change version and power state on vCenter, the
// host-side settings on the simulated Hyper-V hosts.
func vmStates(ctx context.Context, proxy framework.ClusterProxy, flavor string, config *clusterctl.E2EConfig) map[string]string {
	ns := config.MustGetVariable(simulatorsNamespace)
	out := map[string]string{}
	if flavor != hypervWindowsFlavor {
		for _, vm := range vcsimVMs(ctx, proxy, ns, "config.changeVersion", "runtime.powerState") {
			out[vm.Name] = fmt.Sprintf("changeVersion %s, %s", vm.Config.ChangeVersion, vm.Runtime.PowerState)
		}
		return out
	}
	pod, err := runningPod(ctx, proxy.GetClient(), ns, simDeployment)
	Expect(err).ToNot(HaveOccurred())
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialPod(ctx, proxy.GetRESTConfig(), pod, simHealthPort)
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://sim/hyperv/vms", http.NoBody)
	Expect(err).ToNot(HaveOccurred())
	resp, err := (&http.Client{Transport: tr}).Do(req)
	Expect(err).ToNot(HaveOccurred(), "read the simulated Hyper-V hosts' VMs")
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).ToNot(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
	var hosts map[string]map[string]json.RawMessage
	Expect(json.Unmarshal(body, &hosts)).To(Succeed())
	for host, vms := range hosts {
		for id, vm := range vms {
			out[host+"/"+id] = string(vm)
		}
	}
	return out
}

// vmKey is the key of a Machine's VM in vmStates.
func vmKey(m *clusterv1.Machine) string {
	if rest, ok := strings.CutPrefix(m.Spec.ProviderID, "hyperv://"); ok {
		return rest
	}
	return m.Spec.InfrastructureRef.Name
}

// capwinCRDs are the CRDs of capwin's two providers.
func capwinCRDs(ctx context.Context, c client.Client) []apiextensionsv1.CustomResourceDefinition {
	var out []apiextensionsv1.CustomResourceDefinition
	for _, label := range []string{clusterctlv1.ManifestLabel(capwinProvider, clusterctlv1.InfrastructureProviderType),
		clusterctlv1.ManifestLabel(windowsBootstrapProvider, clusterctlv1.BootstrapProviderType)} {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		Expect(c.List(ctx, list, client.MatchingLabels{clusterv1.ProviderNameLabel: label})).To(Succeed())
		Expect(list.Items).ToNot(BeEmpty(), "no CRD labelled %s", label)
		out = append(out, list.Items...)
	}
	return out
}

// expectStoredVersions: every capwin CRD stores v1beta1 only (no migration is pending).
func expectStoredVersions(ctx context.Context, c client.Client) {
	for _, crd := range capwinCRDs(ctx, c) {
		Expect(crd.Status.StoredVersions).To(Equal([]string{"v1beta1"}), "stored versions of %s", crd.Name)
	}
}

// expectObjectsPassWebhooks reads every capwin object of the namespace with the new CRDs and
// sends it back unchanged as a dry-run update: the new release's defaulting and validating
// webhooks accept what the old release and its flavor wrote.
func expectObjectsPassWebhooks(ctx context.Context, c client.Client, namespace string) {
	checked := 0
	for _, crd := range capwinCRDs(ctx, c) {
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: "v1beta1", Kind: crd.Spec.Names.ListKind})
		Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed(), "list %s", crd.Name)
		for i := range list.Items {
			o := &list.Items[i]
			Expect(c.Update(ctx, o, client.DryRunAll)).To(Succeed(), "%s %s/%s (written by the old release)", o.GetKind(), namespace, o.GetName())
			checked++
		}
	}
	Expect(checked).To(BeNumerically(">", 0))
	Byf("%d objects of the old release pass the new webhooks", checked)
}
