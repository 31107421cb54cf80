//go:build e2e

package kind

import (
	"context"
	"fmt"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// Names of e2e config variables of the Windows images.
const (
	windowsTemplate                = "WINDOWS_TEMPLATE"
	windowsBuild                   = "WINDOWS_TEMPLATE_BUILD"
	windowsVersionUpgradeTo        = "WINDOWS_VERSION_UPGRADE_TO"
	windowsTemplateUpgradeTo       = "WINDOWS_TEMPLATE_UPGRADE_TO"
	windowsTemplateUpgradeToBuild  = "WINDOWS_TEMPLATE_UPGRADE_TO_BUILD"
	windowsMachineDeploymentSuffix = "-windows" // the windows flavor's MachineDeployment is ${CLUSTER_NAME}-windows
)

// windowsMachineDeployment is the flavor's Windows MachineDeployment.
func windowsMachineDeployment(ctx context.Context, c client.Client, namespace, clusterName string) *clusterv1.MachineDeployment {
	md := &clusterv1.MachineDeployment{}
	key := client.ObjectKey{Namespace: namespace, Name: clusterName + windowsMachineDeploymentSuffix}
	Eventually(func() error { return c.Get(ctx, key, md) }, "1m", "5s").Should(Succeed(), "get MachineDeployment %s", key)
	return md
}

// verifyWindowsWorkers checks what capwin promises about each Windows Machine, beyond Cluster
// API's Ready: the guest reported a successful bootstrap through guestinfo (VCenterMachine
// BootstrapSucceeded), and its Node runs the expected Windows build, is tainted
// os=windows:NoSchedule and was linked to the Machine by providerID.
func verifyWindowsWorkers(ctx context.Context, proxy framework.ClusterProxy, namespace, clusterName, build string) {
	mgmt := proxy.GetClient()
	md := windowsMachineDeployment(ctx, mgmt, namespace, clusterName)
	workload := proxy.GetWorkloadCluster(ctx, namespace, clusterName).GetClient()
	Eventually(func(g Gomega) {
		machines := framework.GetMachinesByMachineDeployments(ctx, framework.GetMachinesByMachineDeploymentsInput{
			Lister: mgmt, ClusterName: clusterName, Namespace: namespace, MachineDeployment: *md,
		})
		g.Expect(machines).To(HaveLen(int(ptrValue(md.Spec.Replicas))), "Machines of %s", klog.KObj(md))
		for i := range machines {
			checkWindowsMachine(ctx, g, mgmt, workload, &machines[i], build)
		}
	}, "5m", "10s").Should(Succeed())
}

func checkWindowsMachine(ctx context.Context, g Gomega, mgmt, workload client.Client, m *clusterv1.Machine, build string) {
	g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no Node", klog.KObj(m))
	vcm := &infrav1.VCenterMachine{}
	g.Expect(mgmt.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, vcm)).To(Succeed())
	g.Expect(conditions.IsTrue(vcm, infrav1.BootstrapSucceededCondition)).To(BeTrue(),
		"VCenterMachine %s: %s is not True (bootstrap report: %+v)", klog.KObj(vcm), infrav1.BootstrapSucceededCondition, vcm.Status.Bootstrap)

	node := &corev1.Node{}
	g.Expect(workload.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
	g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID), "Node %s is linked to its Machine by providerID", node.Name)
	g.Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelOSStable, "windows"))
	g.Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelWindowsBuild, "10.0."+build), "Node %s runs the template's Windows build", node.Name)
	g.Expect(node.Spec.Taints).To(ContainElement(And(
		HaveField("Key", "os"), HaveField("Value", "windows"), HaveField("Effect", corev1.TaintEffectNoSchedule),
	)), "Node %s is tainted os=windows:NoSchedule", node.Name)
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// windowsTemplateName is the windows flavor's name of the VCenterMachineTemplate of a Windows
// version (${CLUSTER_NAME}-windows-${WINDOWS_VERSION}).
func windowsTemplateName(clusterName, version string) string {
	return fmt.Sprintf("%s-windows-%s", clusterName, version)
}
