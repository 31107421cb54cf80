//go:build e2e

package kind

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/yaml"
)

// kubernetesVersionUpgradeFrom is the e2e config variable of the Kubernetes version the upgrade
// spec starts from (the minor before KUBERNETES_VERSION).
const kubernetesVersionUpgradeFrom = "KUBERNETES_VERSION_UPGRADE_FROM"

// KubernetesUpgradeSpec upgrades a cluster of the windows flavor from the previous Kubernetes
// minor to KUBERNETES_VERSION as docs/version-upgrades.md says: the kube-proxy DaemonSet of the new
// version is added first (the flavor regenerated with the new version, its kube-proxy-windows addon
// applied), then the control plane, then the Windows MachineDeployment. Throughout, no Node is
// newer than the control plane or more than three minors older (Kubernetes' kubelet skew, which
// Cluster API keeps by upgrading the control plane first); at the end every Windows Node runs the
// new version and carries its capwin.io/kubernetes-version label, and each version's kube-proxy
// DaemonSet selects exactly the Nodes of its version.
func KubernetesUpgradeSpec(ctx context.Context, inputGetter func() SpecInput) {
	var (
		input SpecInput
		env   *specEnv
	)

	BeforeEach(func() {
		input = inputGetter()
		env = newSpecEnv(ctx, "k8s-upgrade", input, kubernetesVersionUpgradeFrom)
	})

	It("Should upgrade the control plane, then the Windows workers, with kube-proxy following the nodes", func() {
		proxy, mgmt, ns := input.BootstrapClusterProxy, input.BootstrapClusterProxy.GetClient(), env.namespace.Name
		from, to := input.E2EConfig.MustGetVariable(kubernetesVersionUpgradeFrom), input.E2EConfig.MustGetVariable(kubernetesVersion)
		Byf("Creating a cluster of the %s flavor on Kubernetes %s", input.Flavor, from)
		clusterName := env.createCluster(ctx, capwinProvider, input.Flavor, from, nil, input.WorkerMachineCount)
		workload := proxy.GetWorkloadCluster(ctx, ns, clusterName).GetClient()
		expectWindowsNodesOn(ctx, workload, from, int(input.WorkerMachineCount))
		expectKubeProxyFollowsNodes(ctx, workload, from)

		Byf("Adding the kube-proxy DaemonSet of %s: the flavor's kube-proxy-windows addon regenerated for it", to)
		addon := clusterctl.ConfigCluster(ctx, clusterctl.ConfigClusterInput{
			LogFolder: env.logFolder(), ClusterctlConfigPath: input.ClusterctlConfigPath, KubeconfigPath: proxy.GetKubeconfigPath(),
			InfrastructureProvider: capwinProvider, Flavor: input.Flavor, Namespace: ns, ClusterName: clusterName,
			KubernetesVersion: to, ControlPlaneMachineCount: ptr.To[int64](1), WorkerMachineCount: ptr.To(input.WorkerMachineCount),
		})
		Expect(proxy.CreateOrUpdate(ctx, addonOnly(addon, "kube-proxy-windows"))).To(Succeed())
		Eventually(func() error {
			return workload.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-proxy-windows-" + to}, &appsv1.DaemonSet{})
		}, "3m", "5s").Should(Succeed(), "the ClusterResourceSet did not apply the DaemonSet of %s", to)

		cluster := framework.GetClusterByName(ctx, framework.GetClusterByNameInput{Getter: mgmt, Namespace: ns, Name: clusterName})
		skew := watchVersionSkew(ctx, mgmt, workload, ns, clusterName)
		Byf("Upgrading the control plane to %s", to)
		kcp := env.cluster.ControlPlane
		helper, err := patch.NewHelper(kcp, mgmt)
		Expect(err).ToNot(HaveOccurred())
		kcp.Spec.Version = to
		Eventually(func() error { return helper.Patch(ctx, kcp) }, "1m", "5s").Should(Succeed())
		framework.WaitForControlPlaneMachinesToBeUpgraded(ctx, framework.WaitForControlPlaneMachinesToBeUpgradedInput{
			Lister: mgmt, Cluster: cluster, MachineCount: int(*kcp.Spec.Replicas), KubernetesUpgradeVersion: to,
		}, input.E2EConfig.GetIntervals(env.name, "wait-machine-upgrade")...)

		Byf("Upgrading the Windows MachineDeployment to %s", to)
		md := windowsMachineDeployment(ctx, mgmt, ns, clusterName)
		patchMachineDeployment(ctx, mgmt, md, func() { md.Spec.Template.Spec.Version = to })
		framework.WaitForMachineDeploymentMachinesToBeUpgraded(ctx, framework.WaitForMachineDeploymentMachinesToBeUpgradedInput{
			Lister: mgmt, Cluster: cluster, MachineCount: int(input.WorkerMachineCount), KubernetesUpgradeVersion: to, MachineDeployment: *md,
		}, input.E2EConfig.GetIntervals(env.name, "wait-machine-upgrade")...)
		expectWindowsNodesOn(ctx, workload, to, int(input.WorkerMachineCount))
		expectKubeProxyFollowsNodes(ctx, workload, to)
		Expect(skew.stop()).To(BeEmpty(), "version skew seen during the upgrade")
		Byf("Kubernetes %s -> %s: control plane, then %d Windows workers; kube-proxy of each version on its nodes only; no skew seen in %d samples",
			from, to, input.WorkerMachineCount, skew.samples)
		By("PASSED!")
	})

	AfterEach(func() { env.cleanUp(ctx, input.SkipCleanup) })
}

// addonOnly keeps the objects of a rendered flavor that carry capwin.io/addon=name (what
// `kubectl apply -l capwin.io/addon=name` applies in docs/version-upgrades.md).
func addonOnly(rendered []byte, name string) []byte {
	objs, err := yaml.ToUnstructured(rendered)
	Expect(err).ToNot(HaveOccurred())
	var kept []unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()["capwin.io/addon"] == name {
			kept = append(kept, o)
		}
	}
	Expect(kept).ToNot(BeEmpty(), "no object labelled capwin.io/addon=%s", name)
	out, err := yaml.FromUnstructured(kept)
	Expect(err).ToNot(HaveOccurred())
	return out
}

// expectWindowsNodesOn waits until the workload cluster has count Windows Nodes, all of kubelet
// version v and labelled capwin.io/kubernetes-version v.
func expectWindowsNodesOn(ctx context.Context, workload client.Client, v string, count int) {
	Eventually(func(g Gomega) {
		nodes := &corev1.NodeList{}
		g.Expect(workload.List(ctx, nodes, client.MatchingLabels{corev1.LabelOSStable: "windows"})).To(Succeed())
		g.Expect(nodes.Items).To(HaveLen(count))
		for _, n := range nodes.Items {
			g.Expect(n.Status.NodeInfo.KubeletVersion).To(Equal(v), "kubelet of %s", n.Name)
			g.Expect(n.Labels).To(HaveKeyWithValue("capwin.io/kubernetes-version", v), "labels of %s", n.Name)
		}
	}, "5m", "5s").Should(Succeed())
}

// expectKubeProxyFollowsNodes: the kube-proxy-windows DaemonSet of version v selects every Windows
// Node of v, and each other version's DaemonSet selects none of them.
func expectKubeProxyFollowsNodes(ctx context.Context, workload client.Client, v string) {
	daemonSets := &appsv1.DaemonSetList{}
	Expect(workload.List(ctx, daemonSets, client.InNamespace("kube-system"), client.MatchingLabels{"k8s-app": "kube-proxy-windows"})).To(Succeed())
	nodes := &corev1.NodeList{}
	Expect(workload.List(ctx, nodes, client.MatchingLabels{corev1.LabelOSStable: "windows"})).To(Succeed())
	found := false
	for _, ds := range daemonSets.Items {
		version := strings.TrimPrefix(ds.Name, "kube-proxy-windows-")
		found = found || version == v
		for _, n := range nodes.Items {
			selected := true
			for k, val := range ds.Spec.Template.Spec.NodeSelector {
				selected = selected && n.Labels[k] == val
			}
			Expect(selected).To(Equal(version == v), "DaemonSet %s on Node %s (%s)", ds.Name, n.Name, n.Status.NodeInfo.KubeletVersion)
		}
	}
	Expect(found).To(BeTrue(), "no kube-proxy-windows DaemonSet of %s", v)
}

// skewWatch samples the cluster's versions every 2 s during an upgrade.
type skewWatch struct {
	cancel     context.CancelFunc
	done       chan struct{}
	violations []string
	samples    int
}

// watchVersionSkew records every moment a Node is newer than the control plane or more than three
// minors older than it.
func watchVersionSkew(ctx context.Context, mgmt, workload client.Client, namespace, clusterName string) *skewWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &skewWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		for ctx.Err() == nil {
			w.sample(ctx, mgmt, workload, namespace, clusterName)
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	return w
}

func (w *skewWatch) sample(ctx context.Context, mgmt, workload client.Client, namespace, clusterName string) {
	machines := &clusterv1.MachineList{}
	nodes := &corev1.NodeList{}
	if mgmt.List(ctx, machines, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName,
		clusterv1.MachineControlPlaneLabel: ""}) != nil || workload.List(ctx, nodes) != nil {
		return
	}
	var newestCP *version.Version
	for _, m := range machines.Items {
		if v, err := version.ParseSemantic(m.Spec.Version); err == nil && (newestCP == nil || v.GreaterThan(newestCP)) {
			newestCP = v
		}
	}
	if newestCP == nil {
		return
	}
	w.samples++
	for _, n := range nodes.Items {
		v, err := version.ParseSemantic(n.Status.NodeInfo.KubeletVersion)
		if err != nil {
			continue
		}
		if v.Major() == newestCP.Major() && (v.Minor() > newestCP.Minor() || newestCP.Minor()-v.Minor() > 3) {
			w.violations = append(w.violations, n.Name+" "+v.String()+" with the control plane at "+newestCP.String())
		}
	}
}

// stop ends the sampling and returns what broke the skew rules.
func (w *skewWatch) stop() []string {
	w.cancel()
	<-w.done
	return w.violations
}

var _ = Describe("When upgrading Kubernetes on a cluster with Windows workers", Serial, func() {
	KubernetesUpgradeSpec(ctx, func() SpecInput { return suiteInput("windows", 2) })
})
