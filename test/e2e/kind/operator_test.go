//go:build e2e

package kind

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util/resource"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
)

const (
	capiOperatorManifest = "CAPI_OPERATOR_MANIFEST" // e2e config: the operator's manifest, relative to the config
	operatorNamespace    = "capi-operator-system"
	operatorDeployment   = "capi-operator-controller-manager"
)

// OperatorInstallSpec installs the suite's providers (Cluster API, kubeadm, and capwin's two)
// with the Cluster API Operator instead of clusterctl init, the way its offline path goes: the
// release files of each provider in a ConfigMap, a provider object that selects them. What
// clusterctl init installed is deleted first (CRDs stay); the Cluster API Operator's manifest is
// applied; then the provider objects must become Ready at their versions, capwin's managers lead
// on this tree's images, and a cluster of the flavor gets its Ready Windows machines. Afterwards the operator uninstalls them and clusterctl init restores
// the suite's management cluster.
func OperatorInstallSpec(ctx context.Context, inputGetter func() SpecInput) {
	var (
		input SpecInput
		env   *specEnv
	)

	BeforeEach(func() {
		input = inputGetter()
		env = newSpecEnv(ctx, "operator", input, capiOperatorManifest)
	})

	It("Should install capwin from its release files and create Ready Windows machines", func() {
		proxy, mgmt := input.BootstrapClusterProxy, input.BootstrapClusterProxy.GetClient()
		providers := operatorProviders(filepath.Join(input.ArtifactFolder, "repository"))
		operator := operatorObjects(input.E2EConfig)

		By("Deleting every provider clusterctl init installed (CRDs stay)")
		c, err := clusterctlclient.New(ctx, input.ClusterctlConfigPath)
		Expect(err).ToNot(HaveOccurred())
		DeferCleanup(func() { restoreClusterctlInit(ctx, proxy, providers, operator) })
		Expect(c.Delete(ctx, clusterctlclient.DeleteOptions{
			Kubeconfig: clusterctlclient.Kubeconfig{Path: proxy.GetKubeconfigPath()}, DeleteAll: true})).To(Succeed())

		By("Installing the Cluster API Operator")
		start := time.Now()
		for _, o := range operator {
			if err := mgmt.Create(ctx, o.DeepCopyObject().(client.Object)); !apierrors.IsAlreadyExists(err) {
				Expect(err).ToNot(HaveOccurred(), "create %s %s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
			}
		}
		waitForDeployments(ctx, proxy, operatorNamespace, env.logFolder())

		By("Creating the providers' ConfigMaps, the variables Secret and the provider objects")
		Expect(mgmt.Create(ctx, operatorVariablesSecret(input.E2EConfig, operatorNamespace, providers))).To(Succeed())
		for _, p := range providers {
			ensureNamespace(ctx, mgmt, p.namespace)
			Expect(mgmt.Create(ctx, p.configMap())).To(Succeed(), "ConfigMap of %s", p.folder)
			Eventually(func() error { // until the operator's webhook serves
				return mgmt.Create(ctx, p.object(operatorNamespace))
			}, "2m", "2s").Should(Succeed(), "%s %s", p.kind, p.name)
		}

		for _, p := range providers {
			Eventually(func(g Gomega) {
				ready, state := providerReady(ctx, mgmt, p)
				g.Expect(ready).To(BeTrue(), "%s %s/%s: %s", p.kind, p.namespace, p.name, state)
			}, input.E2EConfig.GetIntervals(env.name, "wait-controllers")...).Should(Succeed())
			Byf("%s %s/%s is Ready at %s", p.kind, p.namespace, p.name, p.version)
			waitForDeployments(ctx, proxy, p.namespace, env.logFolder())
		}
		Byf("The operator installed %d providers in %s", len(providers), time.Since(start).Round(time.Second))
		expectManagersOn(ctx, mgmt, "ghcr.io/capwin/", ":dev")
		expectNoInventory(ctx, mgmt)

		// Without an inventory clusterctl generate takes the repository's newest version unless
		// it is named, as the quick start says to.
		installed := providerVersion(providers, "InfrastructureProvider", capwinProvider)
		Byf("Creating a cluster from the %s flavor of %s", input.Flavor, installed)
		clusterName := env.createCluster(ctx, capwinProvider+":"+installed, input.Flavor, "", nil, input.WorkerMachineCount)
		verifyWindowsWorkers(ctx, proxy, env.namespace.Name, clusterName, input.E2EConfig.MustGetVariable(windowsBuild))
		Byf("Cluster %s: %d Ready Windows machines on providers the operator installed", clusterName, input.WorkerMachineCount)
		By("PASSED!")
	})

	AfterEach(func() { env.cleanUp(ctx, input.SkipCleanup) })
}

// operatorObjects are the objects of the operator's manifest (e2e config CAPI_OPERATOR_MANIFEST),
// in the order they can be created in (Namespace and CRDs first).
func operatorObjects(config *clusterctl.E2EConfig) []client.Object {
	path := config.MustGetVariable(capiOperatorManifest)
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(configPath), path)
	}
	raw, err := os.ReadFile(path) //nolint:gosec // named by the e2e config
	Expect(err).ToNot(HaveOccurred(), "the operator's manifest (make e2e-images writes it)")
	objs, err := utilyaml.ToUnstructured(raw)
	Expect(err).ToNot(HaveOccurred())
	objs = resource.SortForCreate(objs)
	out := make([]client.Object, 0, len(objs))
	for i := range objs {
		out = append(out, &objs[i])
	}
	Expect(out).ToNot(BeEmpty())
	return out
}

// ensureNamespace creates the namespace unless it exists (clusterctl delete leaves them).
func ensureNamespace(ctx context.Context, c client.Client, name string) {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).ToNot(HaveOccurred())
	}
}

// waitForDeployments waits until every Deployment in namespace is available and streams its
// Pods' logs into the spec's log folder (where the secret scan reads capwin's).
func waitForDeployments(ctx context.Context, proxy framework.ClusterProxy, namespace, logFolder string) {
	list := &appsv1.DeploymentList{}
	Eventually(func(g Gomega) {
		g.Expect(proxy.GetClient().List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		g.Expect(list.Items).ToNot(BeEmpty(), "Deployments in %s", namespace)
	}, "2m", "2s").Should(Succeed())
	for i := range list.Items {
		d := &list.Items[i]
		framework.WaitForDeploymentsAvailable(ctx, framework.WaitForDeploymentsAvailableInput{Getter: proxy.GetClient(), Deployment: d}, "5m", "2s")
		framework.WatchDeploymentLogsByName(watchesCtx, framework.WatchDeploymentLogsByNameInput{
			GetLister: proxy.GetClient(), Cache: proxy.GetCache(ctx), ClientSet: proxy.GetClientSet(), Deployment: d,
			LogPath: filepath.Join(logFolder, "logs", namespace),
		})
	}
}

// providerVersion is the version the spec installs of the provider of that kind and name.
func providerVersion(providers []operatorProvider, kind, name string) string {
	for _, p := range providers {
		if p.kind == kind && p.name == name {
			return p.version
		}
	}
	Fail("no " + kind + " " + name)
	return ""
}

// expectNoInventory checks what docs/install.md says of the operator: it keeps no clusterctl
// inventory (its provider objects take that role; v0.29.0 answers clusterctl's inventory reads
// from them inside its own process), so clusterctl itself finds no installed provider.
func expectNoInventory(ctx context.Context, c client.Client) {
	inventory := &clusterctlv1.ProviderList{}
	Expect(c.List(ctx, inventory)).To(Succeed())
	Expect(inventory.Items).To(BeEmpty(), "clusterctl inventory")
}

// restoreClusterctlInit undoes the spec: the provider objects are deleted (the operator deletes
// their components; CRDs stay), then the operator and the spec's ConfigMaps and Secret, and
// clusterctl init installs the suite's providers again.
func restoreClusterctlInit(ctx context.Context, proxy framework.ClusterProxy, providers []operatorProvider, operator []client.Object) {
	c := proxy.GetClient()
	By("Deleting the provider objects: the operator uninstalls the providers")
	for i := len(providers) - 1; i >= 0; i-- {
		p := providers[i]
		o := p.object("")
		deleteObject(ctx, c, o)
		Eventually(func() bool {
			return gone(c.Get(ctx, client.ObjectKeyFromObject(o), o))
		}, "5m", "2s").Should(BeTrue(), "%s %s/%s is still there", p.kind, p.namespace, p.name)
		deleteObject(ctx, c, p.configMapRef()) // no need to gzip the components again
	}
	By("Deleting the Cluster API Operator")
	for i := len(operator) - 1; i >= 0; i-- {
		deleteObject(ctx, c, operator[i])
	}
	Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &corev1.Namespace{}))
	}, "3m", "2s").Should(BeTrue(), "namespace %s is still there", operatorNamespace)

	By("Installing the suite's providers again with clusterctl init")
	initBootstrapCluster(proxy, e2eConfig, clusterctlConfigPath, artifactFolder)
	expectManagersOn(ctx, c, "ghcr.io/capwin/", ":dev")
}

// gone is whether err says that the object, or its kind, is not there.
func gone(err error) bool { return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) }

// deleteObject deletes o unless it, or its kind, is gone already.
func deleteObject(ctx context.Context, c client.Client, o client.Object) {
	if err := c.Delete(ctx, o); !gone(err) {
		Expect(err).ToNot(HaveOccurred(), "delete %s %s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
	}
}

// The operator spec on the windows flavor: Serial, since it replaces every provider of the
// management cluster for its duration.
var _ = Describe("When installing capwin with the Cluster API Operator", Serial, func() {
	OperatorInstallSpec(ctx, func() SpecInput { return suiteInput("windows", 2) })
})
