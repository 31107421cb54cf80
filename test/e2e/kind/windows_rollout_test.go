//go:build e2e

package kind

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/util/patch"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// WindowsTemplateRolloutSpecInput is the input of WindowsTemplateRolloutSpec.
type WindowsTemplateRolloutSpecInput struct{ SpecInput }

// WindowsTemplateRolloutSpec is Cluster API's MachineDeployment rollout (KCPAndMachineDeployment
// RolloutSpec / UpgradeMachineDeploymentInfrastructureRefAndWait) adapted to a Windows Server
// upgrade: the upstream helper copies the MachineDeployment's infrastructure template as it is,
// while an upgrade is a new VCenterMachineTemplate naming another Windows template. The spec
// creates it, points the Windows MachineDeployment at it and waits until every Machine runs on
// the new template with a Ready Node of the new Windows build, and every old Machine, its
// VCenterMachine (and so its VM) and its Node are gone.
func WindowsTemplateRolloutSpec(ctx context.Context, inputGetter func() WindowsTemplateRolloutSpecInput) {
	var (
		specName = "windows-rollout"
		input    WindowsTemplateRolloutSpecInput
		env      *specEnv
	)

	BeforeEach(func() {
		input = inputGetter()
		env = newSpecEnv(ctx, specName, input.SpecInput, windowsBuild, windowsVersionUpgradeTo, windowsTemplateUpgradeTo, windowsTemplateUpgradeToBuild)
	})

	It("Should replace every Windows node with one on the new Windows template", func() {
		clusterName := env.createCluster(ctx, capwinProvider, input.Flavor, "", nil, input.WorkerMachineCount)
		namespace := env.namespace

		proxy, mgmt := input.BootstrapClusterProxy, input.BootstrapClusterProxy.GetClient()
		By("Checking the Windows workers on the first template")
		verifyWindowsWorkers(ctx, proxy, namespace.Name, clusterName, input.E2EConfig.MustGetVariable(windowsBuild))

		md := windowsMachineDeployment(ctx, mgmt, namespace.Name, clusterName)
		oldMachines := machineNames(framework.GetMachinesByMachineDeployments(ctx, framework.GetMachinesByMachineDeploymentsInput{
			Lister: mgmt, ClusterName: clusterName, Namespace: namespace.Name, MachineDeployment: *md,
		}))

		By("Creating a VCenterMachineTemplate with the new Windows template")
		version := input.E2EConfig.MustGetVariable(windowsVersionUpgradeTo)
		newTemplate := newWindowsTemplate(ctx, mgmt, md, windowsTemplateName(clusterName, version), input.E2EConfig.MustGetVariable(windowsTemplateUpgradeTo))

		By("Creating a WindowsConfigTemplate that labels the nodes with the new Windows version")
		newBootstrap := newWindowsConfigTemplate(ctx, mgmt, md, newTemplate.Name, version)

		Byf("Rolling MachineDeployment %s out to %s", klog.KObj(md), newTemplate.Name)
		helper, err := patch.NewHelper(md, mgmt)
		Expect(err).ToNot(HaveOccurred())
		md.Spec.Template.Spec.InfrastructureRef.Name = newTemplate.Name
		md.Spec.Template.Spec.Bootstrap.ConfigRef.Name = newBootstrap.Name
		if md.Spec.Template.Labels != nil {
			md.Spec.Template.Labels["capwin.io/windows-version"] = version
		}
		Eventually(func() error { return helper.Patch(ctx, md) }, "1m", "5s").Should(Succeed())

		By("Deleting the managers' leader Pods once the rollout has begun")
		Eventually(func(g Gomega) {
			machines := framework.GetMachinesByMachineDeployments(ctx, framework.GetMachinesByMachineDeploymentsInput{
				Lister: mgmt, ClusterName: clusterName, Namespace: namespace.Name, MachineDeployment: *md,
			})
			g.Expect(machineNames(machines).Difference(oldMachines).Len()).To(BeNumerically(">", 0))
		}, "5m", "2s").Should(Succeed(), "the rollout created no new Machine")
		for _, m := range capwinManagers {
			deleteLeader(ctx, mgmt, m)
		}

		By("Waiting for every Windows Machine to be replaced")
		workload := proxy.GetWorkloadCluster(ctx, namespace.Name, clusterName).GetClient()
		Eventually(func(g Gomega) {
			machines := framework.GetMachinesByMachineDeployments(ctx, framework.GetMachinesByMachineDeploymentsInput{
				Lister: mgmt, ClusterName: clusterName, Namespace: namespace.Name, MachineDeployment: *md,
			})
			g.Expect(machines).To(HaveLen(int(input.WorkerMachineCount)))
			for i := range machines {
				m := &machines[i]
				g.Expect(oldMachines.Has(m.Name)).To(BeFalse(), "old Machine %s is still there", m.Name)
				g.Expect(m.Spec.InfrastructureRef.Name).ToNot(BeEmpty())
				g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no Node yet", m.Name)
			}
			all := &clusterv1.MachineList{}
			g.Expect(mgmt.List(ctx, all, client.InNamespace(namespace.Name), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName})).To(Succeed())
			for _, m := range all.Items {
				g.Expect(oldMachines.Has(m.Name)).To(BeFalse(), "old Machine %s is still being deleted", m.Name)
			}
			refreshed := &clusterv1.MachineDeployment{}
			g.Expect(mgmt.Get(ctx, client.ObjectKeyFromObject(md), refreshed)).To(Succeed())
			g.Expect(ptr.Deref(refreshed.Status.ReadyReplicas, 0)).To(BeEquivalentTo(input.WorkerMachineCount))
			g.Expect(ptr.Deref(refreshed.Status.UpToDateReplicas, 0)).To(BeEquivalentTo(input.WorkerMachineCount))
		}, input.E2EConfig.GetIntervals(specName, "wait-machine-upgrade")...).Should(Succeed())

		By("Checking the Windows workers on the new template")
		verifyWindowsWorkers(ctx, proxy, namespace.Name, clusterName, input.E2EConfig.MustGetVariable(windowsTemplateUpgradeToBuild))
		By("Checking that no Node of the old Windows build is left")
		oldBuild := "10.0." + input.E2EConfig.MustGetVariable(windowsBuild)
		nodes := &corev1.NodeList{}
		Expect(workload.List(ctx, nodes, client.MatchingLabels{corev1.LabelWindowsBuild: oldBuild})).To(Succeed())
		Expect(nodes.Items).To(BeEmpty(), "Nodes of Windows build %s are left after the rollout", oldBuild)

		By("Checking that the old VCenterMachines are gone and vcsim holds one VM per VCenterMachine")
		vcms := &infrav1.VCenterMachineList{}
		Expect(mgmt.List(ctx, vcms, client.InNamespace(namespace.Name))).To(Succeed())
		want := sets.New[string]()
		for _, vcm := range vcms.Items {
			Expect(vcm.Spec.Template).ToNot(Equal(input.E2EConfig.MustGetVariable(windowsTemplate)),
				"VCenterMachine %s of the old template still exists", vcm.Name)
			want.Insert(vcm.Name)
		}
		templates := sets.New(input.E2EConfig.MustGetVariable(windowsTemplate), input.E2EConfig.MustGetVariable(windowsTemplateUpgradeTo),
			input.E2EConfig.MustGetVariable("LINUX_TEMPLATE"))
		Eventually(func(g Gomega) {
			vms := sets.New(vcsimMachineVMs(ctx, proxy, input.E2EConfig.MustGetVariable(simulatorsNamespace))...).Difference(templates)
			g.Expect(sets.List(vms)).To(Equal(sets.List(want)), "VMs in vcsim (no duplicate, none left behind)")
		}, "2m", "5s").Should(Succeed())
		By("PASSED!")
	})

	AfterEach(func() { env.cleanUp(ctx, input.SkipCleanup) })
}

// newWindowsTemplate copies the MachineDeployment's VCenterMachineTemplate under a new name with
// another Windows template (VCenterMachineTemplates are immutable: an OS upgrade is a new one).
func newWindowsTemplate(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment, name, windowsTemplate string) *infrav1.VCenterMachineTemplate {
	current := &infrav1.VCenterMachineTemplate{}
	key := client.ObjectKey{Namespace: md.Namespace, Name: md.Spec.Template.Spec.InfrastructureRef.Name}
	Eventually(func() error { return c.Get(ctx, key, current) }, "1m", "5s").Should(Succeed(), "get VCenterMachineTemplate %s", key)
	Expect(current.Spec.Template.Spec.Template).ToNot(Equal(windowsTemplate), "the MachineDeployment already uses %s", windowsTemplate)

	next := &infrav1.VCenterMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: md.Namespace, Name: name, Labels: current.Labels},
		Spec:       *current.Spec.DeepCopy(),
	}
	next.Spec.Template.Spec.Template = windowsTemplate
	Eventually(func() error {
		err := c.Create(ctx, next)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}, "1m", "5s").Should(Succeed(), "create VCenterMachineTemplate %s", name)
	return next
}

// newWindowsConfigTemplate copies the MachineDeployment's WindowsConfigTemplate under a new name
// with the node label capwin.io/windows-version of the new release (templates are immutable).
func newWindowsConfigTemplate(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment, name, version string) *bootstrapv1.WindowsConfigTemplate {
	current := &bootstrapv1.WindowsConfigTemplate{}
	key := client.ObjectKey{Namespace: md.Namespace, Name: md.Spec.Template.Spec.Bootstrap.ConfigRef.Name}
	Eventually(func() error { return c.Get(ctx, key, current) }, "1m", "5s").Should(Succeed(), "get WindowsConfigTemplate %s", key)
	next := &bootstrapv1.WindowsConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: md.Namespace, Name: name, Labels: current.Labels},
		Spec:       *current.Spec.DeepCopy(),
	}
	if next.Spec.Template.Spec.NodeRegistration.Labels == nil {
		next.Spec.Template.Spec.NodeRegistration.Labels = map[string]string{}
	}
	next.Spec.Template.Spec.NodeRegistration.Labels["capwin.io/windows-version"] = version
	Eventually(func() error {
		if err := c.Create(ctx, next); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}, "1m", "5s").Should(Succeed(), "create WindowsConfigTemplate %s", name)
	return next
}

func machineNames(machines []clusterv1.Machine) sets.Set[string] {
	s := sets.New[string]()
	for _, m := range machines {
		s.Insert(m.Name)
	}
	return s
}

var _ = Describe("When rolling the Windows MachineDeployment out to a new Windows Server template", func() {
	WindowsTemplateRolloutSpec(ctx, func() WindowsTemplateRolloutSpecInput {
		return WindowsTemplateRolloutSpecInput{suiteInput("windows", 2)}
	})
})
