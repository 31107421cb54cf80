//go:build e2e

package kind

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// The hyperv-windows flavor and the e2e config variables of its simulated Hyper-V hosts.
const (
	hypervWindowsFlavor = "hyperv-windows"
	hypervHosts         = "HYPERV_HOSTS"
	hypervUsername      = "HYPERV_USERNAME"
	hypervPassword      = "HYPERV_PASSWORD"
	hypervWindowsBuild  = "HYPERV_WINDOWS_PARENT_DISK_BUILD"
)

// Cluster API's quick start with the hyperv-windows flavor: a KubeadmControlPlane (Linux) and the
// Windows MachineDeployment on Hyper-V hosts the simulator serves at the WinRM boundary (capwin's
// provider reaches them with its real WinRM client, over HTTPS pinned by caBundle, with NTLM). The
// spec waits for the Cluster to be Available and every Machine to be Ready; then each Windows
// Machine's HyperVMachine reports BootstrapSucceeded (from the guest's KVP report) and its Node
// runs the parent disk's Windows build, is tainted os=windows:NoSchedule and is linked to its
// Machine by a hyperv:// providerID. A joined Machine and one that never joins are then
// diagnosed with render logs (checkRenderLogs). Serial: one workload cluster at a time.
var _ = Describe("When following the Cluster API quick start with the hyperv-windows flavor", Serial, func() {
	capie2e.QuickStartSpec(ctx, func() capie2e.QuickStartSpecInput {
		ensureReleaseFlavor(e2eConfig, clusterctlConfigPath, hypervWindowsFlavor)
		return capie2e.QuickStartSpecInput{
			E2EConfig:                e2eConfig,
			ClusterctlConfigPath:     clusterctlConfigPath,
			BootstrapClusterProxy:    bootstrapClusterProxy,
			ArtifactFolder:           artifactFolder,
			SkipCleanup:              skipCleanup,
			InfrastructureProvider:   ptr.To(capwinProvider),
			Flavor:                   ptr.To(hypervWindowsFlavor),
			ControlPlaneMachineCount: ptr.To[int64](1),
			WorkerMachineCount:       ptr.To[int64](2),
			// The flavor's images are the simulated hosts' parent disks (the vCenter specs use
			// the config's vSphere template names).
			ClusterctlVariables: map[string]string{
				"LINUX_TEMPLATE":   e2eConfig.MustGetVariable("HYPERV_LINUX_PARENT_DISK"),
				"WINDOWS_TEMPLATE": e2eConfig.MustGetVariable("HYPERV_WINDOWS_PARENT_DISK"),
			},
			PostNamespaceCreated: func(proxy framework.ClusterProxy, namespace string) {
				createHyperVCredentials(ctx, proxy.GetClient(), e2eConfig, namespace)
			},
			PostMachinesProvisioned: func(proxy framework.ClusterProxy, namespace, clusterName string) {
				verifyHyperVWindowsWorkers(ctx, proxy, namespace, clusterName, e2eConfig.MustGetVariable(hypervWindowsBuild))
				checkRenderLogs(ctx, proxy, namespace, clusterName)
			},
		}
	})
})

// hypervHostsOf reads HYPERV_HOSTS as the flavor pastes it into HyperVCluster.spec.hosts.
func hypervHostsOf(config *clusterctl.E2EConfig) []infrav1.HyperVHost {
	var hosts []infrav1.HyperVHost
	Expect(yaml.UnmarshalStrict([]byte(config.MustGetVariable(hypervHosts)), &hosts)).To(Succeed(), "%s in the e2e config", hypervHosts)
	Expect(hosts).ToNot(BeEmpty(), "%s names no host", hypervHosts)
	return hosts
}

// createHyperVCredentials creates the credentials Secrets HYPERV_HOSTS names, in the spec's
// namespace, with HYPERV_USERNAME and HYPERV_PASSWORD. (The flavor's own CLUSTER_NAME-hyperv
// Secret cannot be named in HYPERV_HOSTS: clusterctl substitutes no variable inside another, and
// the specs' cluster names are random.)
func createHyperVCredentials(ctx context.Context, c client.Client, config *clusterctl.E2EConfig, namespace string) {
	names := sets.New[string]()
	for _, h := range hypervHostsOf(config) {
		names.Insert(h.CredentialsRef.Name)
	}
	for _, name := range sets.List(names) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Type:       corev1.SecretTypeOpaque,
			StringData: map[string]string{"username": config.MustGetVariable(hypervUsername), "password": config.MustGetVariable(hypervPassword)},
		}
		Eventually(func() error {
			if err := c.Create(ctx, s); !apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		}, "1m", "5s").Should(Succeed(), "create the Hyper-V credentials Secret %s/%s", namespace, name)
	}
}

// verifyHyperVWindowsWorkers checks what capwin promises about each Windows Machine on Hyper-V,
// beyond Cluster API's Ready: the guest reported a successful bootstrap through its KVP item
// (HyperVMachine BootstrapSucceeded), the VM runs on one of the cluster's hosts, and its Node
// runs the expected Windows build, is tainted os=windows:NoSchedule and was linked to the Machine
// by its hyperv://<host>/<VM id> providerID.
func verifyHyperVWindowsWorkers(ctx context.Context, proxy framework.ClusterProxy, namespace, clusterName, build string) {
	mgmt := proxy.GetClient()
	md := windowsMachineDeployment(ctx, mgmt, namespace, clusterName)
	workload := proxy.GetWorkloadCluster(ctx, namespace, clusterName).GetClient()
	hosts := sets.New[string]()
	for _, h := range hypervHostsOf(e2eConfig) {
		hosts.Insert(h.Name)
	}
	Eventually(func(g Gomega) {
		machines := framework.GetMachinesByMachineDeployments(ctx, framework.GetMachinesByMachineDeploymentsInput{
			Lister: mgmt, ClusterName: clusterName, Namespace: namespace, MachineDeployment: *md,
		})
		g.Expect(machines).To(HaveLen(int(ptrValue(md.Spec.Replicas))), "Machines of %s", klog.KObj(md))
		for i := range machines {
			checkHyperVWindowsMachine(ctx, g, mgmt, workload, &machines[i], hosts, build)
		}
	}, "5m", "10s").Should(Succeed())
}

func checkHyperVWindowsMachine(ctx context.Context, g Gomega, mgmt, workload client.Client, m *clusterv1.Machine, hosts sets.Set[string], build string) {
	g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no Node", klog.KObj(m))
	hvm := &infrav1.HyperVMachine{}
	g.Expect(mgmt.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, hvm)).To(Succeed())
	g.Expect(conditions.IsTrue(hvm, infrav1.BootstrapSucceededCondition)).To(BeTrue(),
		"HyperVMachine %s: %s is not True (bootstrap report: %+v)", klog.KObj(hvm), infrav1.BootstrapSucceededCondition, hvm.Status.Bootstrap)
	g.Expect(hosts.Has(hvm.Status.VM.Host)).To(BeTrue(), "HyperVMachine %s runs on host %q, not one of %v", klog.KObj(hvm), hvm.Status.VM.Host, sets.List(hosts))
	g.Expect(m.Spec.ProviderID).To(Equal("hyperv://"+hvm.Status.VM.Host+"/"+hvm.Status.VM.ID), "Machine %s", klog.KObj(m))

	// The Node checks of the windows flavor's quick start (checkWindowsMachine).
	node := &corev1.Node{}
	g.Expect(workload.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
	g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID), "Node %s is linked to its Machine by providerID", node.Name)
	g.Expect(strings.HasPrefix(node.Spec.ProviderID, "hyperv://")).To(BeTrue(), "Node %s providerID %q", node.Name, node.Spec.ProviderID)
	g.Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelOSStable, "windows"))
	g.Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelWindowsBuild, "10.0."+build), "Node %s runs the parent disk's Windows build", node.Name)
	g.Expect(node.Spec.Taints).To(ContainElement(And(
		HaveField("Key", "os"), HaveField("Value", "windows"), HaveField("Effect", corev1.TaintEffectNoSchedule),
	)), "Node %s is tainted os=windows:NoSchedule", node.Name)
}
