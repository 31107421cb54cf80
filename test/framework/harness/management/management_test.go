package management_test

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// TestManagement runs CAPI core, capwin's providers and the test control plane in one manager
// against vcsim: first up to "the worker waits for the control plane", then with a workload
// cluster as control plane up to the worker's VM being cloned.
func TestManagement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two apiservers, kube-controller-manager, kube-scheduler and vcsim")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOutput())))
	ctx, g, begin := t.Context(), NewWithT(t), time.Now()
	step := func(what string) { t.Logf("%6.2fs %s", time.Since(begin).Seconds(), what) }
	logDir := os.Getenv("WORKLOAD_LOG_DIR") // keep the workload components' logs for a look afterwards
	if logDir == "" {
		logDir = t.TempDir()
	}
	workloadStarted := startWorkload(ctx, logDir)
	vcsim := startVCSim(t)
	m, err := management.Start(ctx, management.Options{Infrastructure: infrasetup.Options{
		PollInterval: 300 * time.Millisecond, TaskPollInterval: 100 * time.Millisecond,
	}})
	if m != nil {
		t.Cleanup(func() { _ = m.Stop() })
	}
	w, werr := (<-workloadStarted)()
	if w != nil {
		t.Cleanup(func() { _ = w.Stop() })
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(werr).NotTo(HaveOccurred())
	step("management cluster and workload cluster (" + w.StartTime.Round(time.Millisecond).String() + ") started")

	k8s := m.Client
	hooks := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	g.Expect(k8s.List(ctx, hooks)).To(Succeed())
	g.Expect(hooks.Items).To(ConsistOf(HaveField("Name", "capi-mutating-webhook-configuration"),
		HaveField("Name", "capwin-bootstrap-mutating-webhook-configuration"),
		HaveField("Name", "capwin-infrastructure-mutating-webhook-configuration")))

	// The user's objects, and the Secrets KCP writes before its control plane is initialized.
	f := newCluster(ctx, t, k8s, vcsim)
	g.Expect(m.StoreWorkloadSecrets(ctx, f.cluster, w)).To(Succeed())
	cluster := &clusterv1.Cluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.cluster), cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.InfrastructureProvisioned).To(HaveValue(BeTrue()))
		g.Expect(condition(cluster.Status.Conditions, clusterv1.ClusterInfrastructureReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		cp := condition(cluster.Status.Conditions, clusterv1.ClusterControlPlaneInitializedCondition)
		g.Expect(cp.Reason).To(Equal(clusterv1.ClusterControlPlaneNotInitializedReason), "%+v", cp)
		vc := &infrav1.VCenterCluster{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vcCluster), vc)).To(Succeed())
		g.Expect(vc.OwnerReferences).To(ContainElement(HaveField("UID", cluster.UID)), "CAPI adopts the VCenterCluster")
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	step("Cluster: infrastructureProvisioned from the VCenterCluster, control plane not initialized")

	f.addWorkers(ctx, t, k8s)
	g.Expect(f.md.Spec.Selector.MatchLabels).To(HaveKeyWithValue(clusterv1.MachineDeploymentNameLabel, f.md.Name), "CAPI's defaulting webhook ran")
	machine, cfg, vm := &clusterv1.Machine{}, &bootstrapv1.WindowsConfig{}, &infrav1.VCenterMachine{}
	g.Eventually(func(g Gomega) {
		sets := &clusterv1.MachineSetList{}
		g.Expect(k8s.List(ctx, sets, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(sets.Items).To(HaveLen(1))
		g.Expect(controller(&sets.Items[0])).To(Equal("MachineDeployment/" + f.md.Name))
		machines := &clusterv1.MachineList{}
		g.Expect(k8s.List(ctx, machines, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		*machine = machines.Items[0]
		g.Expect(controller(machine)).To(Equal("MachineSet/" + sets.Items[0].Name))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: machine.Spec.Bootstrap.ConfigRef.Name}, cfg)).To(Succeed())
		g.Expect(controller(cfg)).To(Equal("Machine/" + machine.Name))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: machine.Spec.InfrastructureRef.Name}, vm)).To(Succeed())
		g.Expect(controller(vm)).To(Equal("Machine/" + machine.Name))
		c := condition(cfg.Status.Conditions, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c.Reason).To(Equal(bootstrapv1.WaitingForControlPlaneInitializedReason), "%+v", cfg.Status.Conditions)
		c = condition(vm.Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForBootstrapDataReason), "%+v", vm.Status.Conditions)
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	step("MachineDeployment -> MachineSet -> Machine -> WindowsConfig + VCenterMachine, waiting for the control plane")

	g.Expect(m.SetControlPlaneEndpoint(ctx, client.ObjectKey{Namespace: f.ns, Name: "win-cp"}, w.Endpoint)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.cluster), cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
		g.Expect(condition(cluster.Status.Conditions, clusterv1.ClusterControlPlaneInitializedCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(cluster.Spec.ControlPlaneEndpoint.String()).To(Equal(w.Endpoint))
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	step("Cluster: control plane initialized, endpoint " + w.Endpoint)

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
		g.Expect(cfg.Status.Initialization.DataSecretCreated).To(HaveValue(BeTrue()), "%+v", cfg.Status.Conditions)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(machine), machine)).To(Succeed())
		g.Expect(machine.Spec.Bootstrap.DataSecretName).To(Equal(ptr.To(cfg.Status.DataSecretName)))
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	data := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: cfg.Status.DataSecretName}, data)).To(Succeed())
	g.Expect(data.Data).To(HaveKeyWithValue("value", Not(BeEmpty())))
	tokens := &corev1.SecretList{}
	wc, err := client.New(w.Config, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wc.List(ctx, tokens, client.InNamespace(metav1.NamespaceSystem))).To(Succeed())
	g.Expect(tokens.Items).To(ContainElement(HaveField("Type", corev1.SecretTypeBootstrapToken)), "token in the workload cluster")
	step("WindowsConfig: bootstrap token in the workload cluster, data Secret " + data.Name + " on the Machine")

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		g.Expect(vm.Status.VM.InstanceUUID).NotTo(BeEmpty(), "%+v", vm.Status.Conditions)
		g.Expect(vmExists(ctx, g, vcsim, vm.Status.VM.InstanceUUID)).To(BeTrue())
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	step("VCenterMachine: cloned in vcsim (" + vm.Status.VM.InstanceUUID + "), " +
		condition(vm.Status.Conditions, infrav1.VMProvisionedCondition).Reason)
}
