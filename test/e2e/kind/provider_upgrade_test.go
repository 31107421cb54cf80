//go:build e2e

package kind

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util/patch"
)

// Names of e2e config variables of the provider upgrade, and the simulator's annotation that holds
// a Machine's guest (sim.HoldGuestAnnotation).
const (
	holdGuestAnnotation      = "e2e.capwin.io/hold-guest"
	windowsBootstrapProvider = "windows"
	capwinUpgradeFrom        = "CAPWIN_UPGRADE_FROM" // the release the spec installs first (v0.1.0)
	capwinUpgradeTo          = "CAPWIN_UPGRADE_TO"   // the release it upgrades to (this tree, the newest)
)

// ProviderUpgradeSpecInput is the input of ProviderUpgradeSpec.
type ProviderUpgradeSpecInput struct {
	SpecInput
	// ClusterctlVariables and PostNamespaceCreated as in Cluster API's QuickStartSpecInput.
	ClusterctlVariables  map[string]string
	PostNamespaceCreated func(proxy framework.ClusterProxy, namespace string)
}

// ProviderUpgradeSpec is Cluster API's clusterctl upgrade spec for capwin, on the suite's
// management cluster (the upstream spec builds a second management cluster inside a workload
// cluster, which the simulated workload clusters cannot host): capwin's providers are replaced by
// the release CAPWIN_UPGRADE_FROM, a workload cluster is created from that release's flavor, one
// more Windows Machine is left in the middle of its create (VM created and powered on, its guest
// held before it reports), and `clusterctl upgrade apply` moves both providers to
// CAPWIN_UPGRADE_TO. Then no Machine has been replaced or deleted, no VM has changed (vcsim's
// config change versions, the Hyper-V hosts' VM settings), the held machine finishes once its guest
// runs, the new managers lead, the CRDs still store v1beta1 only and every object the old release
// wrote passes the new release's webhooks.
func ProviderUpgradeSpec(ctx context.Context, inputGetter func() ProviderUpgradeSpecInput) {
	var (
		input ProviderUpgradeSpecInput
		env   *specEnv
	)

	BeforeEach(func() {
		input = inputGetter()
		env = newSpecEnv(ctx, "provider-upgrade", input.SpecInput, capwinUpgradeFrom, capwinUpgradeTo)
		if input.PostNamespaceCreated != nil {
			input.PostNamespaceCreated(input.BootstrapClusterProxy, env.namespace.Name)
		}
	})

	It("Should keep every Machine and VM through clusterctl upgrade apply, and finish a create it interrupted", func() {
		proxy, mgmt, ns := input.BootstrapClusterProxy, input.BootstrapClusterProxy.GetClient(), env.namespace.Name
		from, to := input.E2EConfig.MustGetVariable(capwinUpgradeFrom), input.E2EConfig.MustGetVariable(capwinUpgradeTo)

		Byf("Replacing capwin's providers with release %s", from)
		upgraded := false
		DeferCleanup(func() {
			if !upgraded { // the spec failed on the old release: the next specs need this tree's
				installCapwin(ctx, proxy, input.ClusterctlConfigPath, to, env.logFolder())
			}
		})
		installCapwin(ctx, proxy, input.ClusterctlConfigPath, from, env.logFolder())
		expectManagersOn(ctx, mgmt, "/previous/", ":"+from)

		Byf("Creating a cluster from the %s flavor of %s", input.Flavor, from)
		clusterName := env.createCluster(ctx, capwinProvider+":"+from, input.Flavor, "", input.ClusterctlVariables, input.WorkerMachineCount)

		md := windowsMachineDeployment(ctx, mgmt, ns, clusterName)
		By("Leaving one more Windows Machine in the middle of its create: VM powered on, guest held")
		setHoldGuest(ctx, mgmt, md, true)
		before := clusterMachines(ctx, mgmt, ns, clusterName)
		scaleMachineDeployment(ctx, mgmt, md, input.WorkerMachineCount+1)
		inFlight := waitForHeldMachine(ctx, mgmt, ns, clusterName, before)
		vmsBefore := vmStates(ctx, proxy, input.Flavor, input.E2EConfig)
		Byf("Machines before the upgrade: %d Ready, %s in flight; %d VMs recorded", len(before), inFlight.Name, len(vmsBefore))

		Byf("Upgrading capwin's providers to %s with clusterctl upgrade apply", to)
		clusterctl.UpgradeManagementClusterAndWait(ctx, clusterctl.UpgradeManagementClusterAndWaitInput{
			ClusterProxy:            proxy,
			ClusterctlConfigPath:    input.ClusterctlConfigPath,
			InfrastructureProviders: []string{capwinProvider + ":" + to},
			BootstrapProviders:      []string{windowsBootstrapProvider + ":" + to},
			LogFolder:               env.logFolder(),
		}, input.E2EConfig.GetIntervals(env.name, "wait-controllers")...)
		upgraded = true
		expectManagersOn(ctx, mgmt, "ghcr.io/capwin/", ":dev") // this tree's images, whatever the release calls itself

		By("Checking that the CRDs store v1beta1 only and the old release's objects pass the new webhooks")
		expectStoredVersions(ctx, mgmt)
		expectObjectsPassWebhooks(ctx, mgmt, ns)

		By("Releasing the held guest: the interrupted create finishes under the new release")
		setHoldGuest(ctx, mgmt, md, false)
		Eventually(func(g Gomega) {
			m := &clusterv1.Machine{}
			g.Expect(mgmt.Get(ctx, client.ObjectKeyFromObject(inFlight), m)).To(Succeed())
			g.Expect(m.UID).To(Equal(inFlight.UID))
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no Node yet", m.Name)
			g.Expect(ptr.Deref(m.Status.Initialization.InfrastructureProvisioned, false)).To(BeTrue())
		}, input.E2EConfig.GetIntervals(env.name, "wait-worker-nodes")...).Should(Succeed())

		By("Checking that no Machine was replaced and no VM changed")
		after := clusterMachines(ctx, mgmt, ns, clusterName)
		for name, uid := range before {
			Expect(after).To(HaveKeyWithValue(name, uid), "Machine %s was replaced or deleted by the upgrade", name)
		}
		Expect(after).To(HaveLen(len(before)+1), "Machines after the upgrade: %v", after)
		vmsAfter := vmStates(ctx, proxy, input.Flavor, input.E2EConfig)
		changed := 0
		for vm, state := range vmsBefore {
			if vm == vmKey(inFlight) {
				continue // its create went on: its guest reported, the config drive went
			}
			if vmsAfter[vm] != state {
				changed++
				AddReportEntry("changed VM "+vm, state+"\n->\n"+vmsAfter[vm])
			}
		}
		Expect(changed).To(BeZero(), "VMs changed by the upgrade")
		Byf("Upgrade %s -> %s: Machines replaced 0 (of %d), VMs changed 0 (of %d), the interrupted create finished",
			from, to, len(before), len(vmsBefore)-1)
		By("PASSED!")
	})

	AfterEach(func() { env.cleanUp(ctx, input.SkipCleanup) })
}

// installCapwin deletes capwin's two providers (their CRDs and the objects in them stay) and
// installs release version with clusterctl init.
func installCapwin(ctx context.Context, proxy framework.ClusterProxy, clusterctlConfig, version, logFolder string) {
	c, err := clusterctlclient.New(ctx, clusterctlConfig)
	Expect(err).ToNot(HaveOccurred())
	kubeconfig := clusterctlclient.Kubeconfig{Path: proxy.GetKubeconfigPath()}
	Expect(c.Delete(ctx, clusterctlclient.DeleteOptions{Kubeconfig: kubeconfig,
		InfrastructureProviders: []string{capwinProvider}, BootstrapProviders: []string{windowsBootstrapProvider}})).To(Succeed())
	clusterctl.Init(ctx, clusterctl.InitInput{
		LogFolder: logFolder, ClusterctlConfigPath: clusterctlConfig, KubeconfigPath: proxy.GetKubeconfigPath(),
		InfrastructureProviders: []string{capwinProvider + ":" + version},
		BootstrapProviders:      []string{windowsBootstrapProvider + ":" + version},
	})
}

// expectManagersOn waits until each of capwin's managers is led by a Ready Pod whose image
// contains registryPart and ends in tag.
func expectManagersOn(ctx context.Context, c client.Client, registryPart, tag string) {
	for _, m := range capwinManagers {
		Eventually(func(g Gomega) {
			pod, _ := leaderPod(ctx, c, m)
			image := pod.Spec.Containers[0].Image
			g.Expect(image).To(And(ContainSubstring(registryPart), HaveSuffix(tag)), "leader of %s", m.leaseName)
			g.Expect(pod.Status.ContainerStatuses).ToNot(BeEmpty())
			g.Expect(pod.Status.ContainerStatuses[0].Ready).To(BeTrue(), "%s is not ready", pod.Name)
		}, "5m", "5s").Should(Succeed())
		pod, holder := leaderPod(ctx, c, m)
		Byf("%s is led by %s (%s)", m.leaseName, holder, pod.Spec.Containers[0].Image)
	}
}

// setHoldGuest puts holdGuestAnnotation on the MachineDeployment's Machines, or takes it off.
// Cluster API propagates template annotations to the MachineSet and its Machines in place,
// without a rollout.
func setHoldGuest(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment, hold bool) {
	patchMachineDeployment(ctx, c, md, func() {
		if hold {
			if md.Spec.Template.Annotations == nil {
				md.Spec.Template.Annotations = map[string]string{}
			}
			md.Spec.Template.Annotations[holdGuestAnnotation] = ""
		} else {
			delete(md.Spec.Template.Annotations, holdGuestAnnotation)
		}
	})
	Eventually(func(g Gomega) {
		machines := framework.GetMachinesByMachineDeployments(ctx, framework.GetMachinesByMachineDeploymentsInput{
			Lister: c, ClusterName: md.Spec.ClusterName, Namespace: md.Namespace, MachineDeployment: *md,
		})
		g.Expect(machines).ToNot(BeEmpty())
		for _, m := range machines {
			_, has := m.Annotations[holdGuestAnnotation]
			g.Expect(has).To(Equal(hold), "annotation %s on Machine %s", holdGuestAnnotation, m.Name)
		}
	}, "2m", "2s").Should(Succeed(), "Cluster API did not propagate the template's annotation in place")
}

func scaleMachineDeployment(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment, replicas int64) {
	patchMachineDeployment(ctx, c, md, func() {
		md.Spec.Replicas = ptr.To(int32(replicas)) //nolint:gosec // G115: a handful of machines
	})
}

// patchMachineDeployment reads md again, changes it and patches it, until that works.
func patchMachineDeployment(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment, change func()) {
	Eventually(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(md), md); err != nil {
			return err
		}
		helper, err := patch.NewHelper(md, c)
		if err != nil {
			return err
		}
		change()
		return helper.Patch(ctx, md)
	}, "1m", "5s").Should(Succeed())
}

// clusterMachines returns the cluster's Machines, name -> UID.
func clusterMachines(ctx context.Context, c client.Client, namespace, clusterName string) map[string]apitypes.UID {
	list := &clusterv1.MachineList{}
	Expect(c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName})).To(Succeed())
	out := map[string]apitypes.UID{}
	for _, m := range list.Items {
		out[m.Name] = m.UID
	}
	return out
}

// waitForHeldMachine waits for the new Machine (not in before) to hold a held guest: its
// infrastructure machine has a VM (a providerID) and no Node has joined.
func waitForHeldMachine(ctx context.Context, c client.Client, namespace, clusterName string, before map[string]apitypes.UID) *clusterv1.Machine {
	held := &clusterv1.Machine{}
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName})).To(Succeed())
		var fresh []clusterv1.Machine
		for _, m := range list.Items {
			if _, ok := before[m.Name]; !ok {
				fresh = append(fresh, m)
			}
		}
		g.Expect(fresh).To(HaveLen(1), "new Machines")
		*held = fresh[0]
		g.Expect(held.Annotations).To(HaveKey(holdGuestAnnotation))
		g.Expect(held.Spec.ProviderID).ToNot(BeEmpty(), "Machine %s has no VM yet", held.Name)
		g.Expect(held.Status.NodeRef.IsDefined()).To(BeFalse(), "the held guest of %s joined", held.Name)
	}, "5m", "2s").Should(Succeed())
	return held
}

// The provider upgrade on each provider, one workload cluster at a time (Serial). Each leaves
// this tree's release installed, as the suite installed it.
var _ = Describe("When upgrading capwin with clusterctl from its previous release, on vCenter", Serial, func() {
	ProviderUpgradeSpec(ctx, func() ProviderUpgradeSpecInput {
		return ProviderUpgradeSpecInput{
			SpecInput: suiteInput("windows", 2),
			// v0.1.0's windows flavor names the Linux control plane's template VSPHERE_TEMPLATE.
			ClusterctlVariables: map[string]string{"VSPHERE_TEMPLATE": e2eConfig.MustGetVariable("LINUX_TEMPLATE")},
		}
	})
})

var _ = Describe("When upgrading capwin with clusterctl from its previous release, on Hyper-V", Serial, func() {
	ProviderUpgradeSpec(ctx, func() ProviderUpgradeSpecInput {
		return ProviderUpgradeSpecInput{
			SpecInput: suiteInput(hypervWindowsFlavor, 2),
			ClusterctlVariables: map[string]string{
				"LINUX_TEMPLATE":   e2eConfig.MustGetVariable("HYPERV_LINUX_PARENT_DISK"),
				"WINDOWS_TEMPLATE": e2eConfig.MustGetVariable("HYPERV_WINDOWS_PARENT_DISK"),
			},
			PostNamespaceCreated: func(proxy framework.ClusterProxy, namespace string) {
				createHyperVCredentials(ctx, proxy.GetClient(), e2eConfig, namespace)
			},
		}
	})
})
