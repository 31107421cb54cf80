package clusterctl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/core/reconcilers/clusterclass"
	topologycluster "sigs.k8s.io/cluster-api/core/reconcilers/topology/cluster"
	"sigs.k8s.io/cluster-api/util/index"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// TestTopology renders the windows-topology flavor (clusterctl adds clusterclass-windows.yaml),
// lets CAPI's ClusterClass and topology controllers build the cluster, and changes one
// variable, windowsVersion: the Windows MachineDeployment must move to a new
// VCenterMachineTemplate with the 2025 template and a WindowsConfigTemplate that labels ltsc2025.
func TestTopology(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startTopologyControllers(ctx, t)
	ns := namespace(ctx, t, "topology")
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAbc test@example"
	tmpl, err := generate(ctx, localRepo(t, map[string]string{"WINDOWS_NUM_CPUS": "6", "CONTROL_PLANE_MEMORY_MIB": "16384",
		"WINDOWS_SSH_AUTHORIZED_KEYS":   "['" + key + "']",
		"WINDOWS_CONTAINERD_REGISTRIES": "[{host: registry.k8s.io, mirrors: [{url: 'https://mirror.corp.example'}]}]",
		"WINDOWS_DATA_DISKS":            "[{name: containerd, sizeGiB: 100}]",
		"VSPHERE_TAGS":                  "[{category: backup, name: gold}]",
		"WINDOWS_PREPULL_IMAGES":        "['mcr.microsoft.com/windows/servercore:ltsc2022']",
		"WINDOWS_DISKS":                 "[{location: {target: 1, lun: 0}, label: containerd, driveLetter: E}]"}), kubeconfig, ns, "windows-topology", false)
	g.Expect(err).NotTo(HaveOccurred())

	var cluster *unstructured.Unstructured
	objs := tmpl.Objs()
	for i := range objs {
		if objs[i].GetKind() == "Cluster" {
			cluster = &objs[i]
			continue
		}
		g.Expect(apply(ctx, &objs[i])).To(Succeed(), "%s %s", objs[i].GetKind(), objs[i].GetName())
	}
	g.Expect(cluster).NotTo(BeNil(), "the flavor renders a Cluster")
	// The domain join has no clusterctl variable in this flavor: the operator sets the Cluster's.
	vars, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "topology", "variables")
	vars = append(vars, map[string]any{"name": "windowsActiveDirectory",
		"value": topologyDomain()})
	g.Expect(unstructured.SetNestedSlice(cluster.Object, vars, "spec", "topology", "variables")).To(Succeed())
	// The Cluster webhook checks the topology variables against the ClusterClass's status.
	g.Eventually(func(g Gomega) {
		var cc clusterv1.ClusterClass
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "windows"}, &cc)).To(Succeed())
		g.Expect(cc.Status.Variables).NotTo(BeEmpty())
		g.Expect(cc.Status.ObservedGeneration).To(Equal(cc.Generation), "ClusterClass conditions: %+v", cc.Status.Conditions)
	}, time.Minute).Should(Succeed())
	g.Expect(apply(ctx, cluster, client.DryRunAll)).To(Succeed())
	// windowsDisks' schema carries the Disk type's rules: a disk has a drive letter or a folder.
	bad := cluster.DeepCopy()
	badVars, _, _ := unstructured.NestedSlice(bad.Object, "spec", "topology", "variables")
	for _, v := range badVars {
		if v := v.(map[string]any); v["name"] == "windowsDisks" {
			v["value"] = []any{map[string]any{"location": map[string]any{"target": int64(1), "lun": int64(0)}, "driveLetter": "E", "mountPath": `C:\data`}}
		}
	}
	g.Expect(unstructured.SetNestedSlice(bad.Object, badVars, "spec", "topology", "variables")).To(Succeed())
	g.Expect(apply(ctx, bad, client.DryRunAll)).To(MatchError(ContainSubstring("set exactly one of driveLetter and mountPath")))
	// windowsDataDisks' schema is the VCenterDataDisk type's: a Hyper-V type is refused (the class's
	// machines are on vCenter), and so are sizes and names the machine template would refuse.
	for value, msg := range map[string]string{
		`[{"name": "data", "sizeGiB": 10, "type": "Fixed"}]`:           `"variableValue[0].type" field(s) are not specified`,
		`[{"name": "data", "sizeGiB": 10, "provisioning": "Dynamic"}]`: "Unsupported value",
		`[{"name": "data", "sizeGiB": 63489}]`:                         "63488",
		`[{"name": "Data", "sizeGiB": 10}]`:                            "should match",
	} {
		g.Expect(apply(ctx, withVariable(g, cluster, "windowsDataDisks", value), client.DryRunAll)).To(MatchError(ContainSubstring(msg)), "windowsDataDisks %s", value)
	}
	g.Expect(apply(ctx, withVariable(g, cluster, "windowsAntiAffinity", `"Always"`), client.DryRunAll)).To(MatchError(ContainSubstring("Unsupported value")))
	g.Expect(apply(ctx, withVariable(g, cluster, "vcenterTags", `[{"category": "backup"}]`), client.DryRunAll)).To(MatchError(ContainSubstring("Required value")))
	g.Expect(apply(ctx, cluster)).To(Succeed())

	g.Eventually(func(g Gomega) {
		var vc infrav1.VCenterCluster
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterInfraName(ctx, g, ns)}, &vc)).To(Succeed())
		g.Expect(vc.Spec.Server).To(Equal("https://vcenter.example.com"))
		g.Expect(vc.Spec.IdentityRef.Name).To(Equal("win1-vcenter"))
		g.Expect(vc.Spec.ControlPlaneEndpoint.Host).To(Equal("10.0.0.10"))
	}, time.Minute).Should(Succeed())
	g.Eventually(windowsWorkers(ctx, ns)).Should(Equal(workers{"windows-2022-kube-v1.36.3", "ltsc2022"}))
	// The flavor's size, SSH, registry, disk, data disk and domain variables reach the class's templates through its variables.
	g.Eventually(func(g Gomega) {
		vm, boot := windowsTemplates(ctx, g, ns)
		g.Expect(vm.Spec.Template.Spec.NumCPUs).To(BeEquivalentTo(6))
		g.Expect(vm.Spec.Template.Spec.DiskGiB).To(BeEquivalentTo(80))
		// The API server defaults provisioning as in a VCenterMachineTemplate of one's own.
		g.Expect(vm.Spec.Template.Spec.DataDisks).To(Equal([]infrav1.VCenterDataDisk{{Name: "containerd", SizeGiB: 100, Provisioning: infrav1.DiskThin}}))
		users, _, _ := unstructured.NestedSlice(boot.Object, "spec", "template", "spec", "users")
		g.Expect(users).To(ConsistOf(map[string]any{"name": "capwin", "groups": []any{"Administrators"}, "sshAuthorizedKeys": []any{key}}))
		registries, _, _ := unstructured.NestedSlice(boot.Object, "spec", "template", "spec", "containerd", "registries")
		g.Expect(registries).To(ConsistOf(map[string]any{"host": "registry.k8s.io", "mirrors": []any{map[string]any{"url": "https://mirror.corp.example"}}}))
		ad, _, _ := unstructured.NestedMap(boot.Object, "spec", "template", "spec", "activeDirectory")
		g.Expect(ad).To(Equal(topologyDomain()))
		// The topology's MachineDeployment carries the autoscaler's annotations.
		var mds clusterv1.MachineDeploymentList
		g.Expect(mgmt.Client.List(ctx, &mds, client.InNamespace(ns), client.MatchingLabels{
			clusterv1.ClusterTopologyMachineDeploymentNameLabel: "windows"})).To(Succeed())
		g.Expect(mds.Items).To(HaveLen(1))
		for k, v := range autoscalerAnnotations {
			g.Expect(mds.Items[0].Annotations).To(HaveKeyWithValue(k, v))
		}
		prePull, _, _ := unstructured.NestedStringSlice(boot.Object, "spec", "template", "spec", "prePull", "images")
		g.Expect(prePull).To(Equal([]string{"mcr.microsoft.com/windows/servercore:ltsc2022"}))
		// windowsReservations' defaults reach the kubelet configuration.
		kubelet, _, _ := unstructured.NestedMap(boot.Object, "spec", "template", "spec", "kubeletConfiguration")
		g.Expect(kubelet).To(Equal(defaultReservations))
		// The API server defaults partitionStyle and fileSystem as in a WindowsConfigTemplate of one's own.
		disks, _, _ := unstructured.NestedSlice(boot.Object, "spec", "template", "spec", "disks")
		g.Expect(disks).To(ConsistOf(map[string]any{"location": map[string]any{"target": int64(1), "lun": int64(0)},
			"label": "containerd", "driveLetter": "E", "partitionStyle": "GPT", "fileSystem": "NTFS"}))
		var cps infrav1.VCenterMachineTemplateList
		g.Expect(mgmt.Client.List(ctx, &cps, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterTopologyOwnedLabel: ""})).To(Succeed())
		memory := map[int64]bool{}
		for _, t := range cps.Items {
			if t.Spec.Template.Spec.OS == infrav1.OSLinux {
				memory[int64(t.Spec.Template.Spec.MemoryMiB)] = true
				g.Expect(t.Spec.Template.Spec.DataDisks).To(BeEmpty(), "the Linux template %s gets no data disks", t.Name)
			}
		}
		g.Expect(memory).To(HaveKey(int64(16384)), "the control plane's memory")
		// Anti-affinity is on (Soft) by default for the control plane (the flavor's only Linux
		// machines) and the Windows workers, and vcenterTags reaches every template.
		for _, t := range cps.Items {
			g.Expect(t.Spec.Template.Spec.AntiAffinity).To(Equal(&infrav1.VCenterAntiAffinity{Mode: infrav1.AntiAffinitySoft}), "template %s", t.Name)
			g.Expect(t.Spec.Template.Spec.Tags).To(Equal([]infrav1.VCenterTag{{Category: "backup", Name: "gold"}}), "template %s", t.Name)
		}
	}, time.Minute).Should(Succeed())

	// The upgrade: the 2025 template next to the 2022 one, then one variable.
	g.Expect(setVariables(ctx, ns, "win1", map[string]string{
		"windowsTemplates": `{"ltsc2022": "windows-2022-kube-v1.36.3", "ltsc2025": "windows-2025-kube-v1.36.3"}`,
		"windowsVersion":   `"ltsc2025"`,
	})).To(Succeed())
	g.Eventually(windowsWorkers(ctx, ns), time.Minute).Should(Equal(workers{"windows-2025-kube-v1.36.3", "ltsc2025"}),
		func() string { return topologyReconciled(ctx, ns) })
	vm, _ := windowsTemplates(ctx, g, ns)
	g.Expect(vm.Spec.Template.Spec.DataDisks).To(HaveLen(1), "the new template keeps the data disk")

	// Without data disks the patch is off: the next template has none.
	g.Expect(setVariables(ctx, ns, "win1", map[string]string{"windowsDataDisks": `[]`})).To(Succeed())
	g.Eventually(func(g Gomega) {
		vm, _ := windowsTemplates(ctx, g, ns)
		g.Expect(vm.Spec.Template.Spec.DataDisks).To(BeEmpty())
	}, time.Minute).Should(Succeed(), func() string { return topologyReconciled(ctx, ns) })
}

// topologyReconciled is the Cluster's TopologyReconciled condition, for failure messages.
func topologyReconciled(ctx context.Context, ns string) string {
	var c clusterv1.Cluster
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "win1"}, &c); err != nil {
		return err.Error()
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == clusterv1.ClusterTopologyReconciledCondition {
			return fmt.Sprintf("Cluster %s: %s %s", cond.Type, cond.Reason, cond.Message)
		}
	}
	return "Cluster has no TopologyReconciled condition"
}

// workers is what the Windows MachineDeployment's templates say.
type workers struct{ Template, VersionLabel string }

func windowsWorkers(ctx context.Context, ns string) func(g Gomega) workers {
	return func(g Gomega) workers {
		vm, boot := windowsTemplates(ctx, g, ns)
		g.Expect(vm.Spec.Template.Spec.OS).To(Equal(infrav1.OSWindows))
		label, _, _ := unstructured.NestedString(boot.Object, "spec", "template", "spec", "nodeRegistration", "labels", "capwin.io/windows-version")
		return workers{vm.Spec.Template.Spec.Template, label}
	}
}

// windowsTemplates are the machine template and WindowsConfigTemplate of the topology's Windows
// MachineDeployment.
func windowsTemplates(ctx context.Context, g Gomega, ns string) (*infrav1.VCenterMachineTemplate, *unstructured.Unstructured) {
	var mds clusterv1.MachineDeploymentList
	g.Expect(mgmt.Client.List(ctx, &mds, client.InNamespace(ns), client.MatchingLabels{
		clusterv1.ClusterTopologyMachineDeploymentNameLabel: "windows"})).To(Succeed())
	g.Expect(mds.Items).To(HaveLen(1))
	spec := mds.Items[0].Spec.Template.Spec
	vm := &infrav1.VCenterMachineTemplate{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: spec.InfrastructureRef.Name}, vm)).To(Succeed())
	boot := &unstructured.Unstructured{}
	boot.SetGroupVersionKind(schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "WindowsConfigTemplate"})
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: spec.Bootstrap.ConfigRef.Name}, boot)).To(Succeed())
	return vm, boot
}

func clusterInfraName(ctx context.Context, g Gomega, ns string) string {
	var c clusterv1.Cluster
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "win1"}, &c)).To(Succeed())
	g.Expect(c.Spec.InfrastructureRef.Name).NotTo(BeEmpty())
	return c.Spec.InfrastructureRef.Name
}

// withVariable is a copy of a Cluster whose topology variable name holds value (JSON).
func withVariable(g Gomega, cluster *unstructured.Unstructured, name, value string) *unstructured.Unstructured {
	var v any
	g.Expect(json.Unmarshal([]byte(value), &v)).To(Succeed())
	c := cluster.DeepCopy()
	vars, _, _ := unstructured.NestedSlice(c.Object, "spec", "topology", "variables")
	found := false
	for _, o := range vars {
		if o := o.(map[string]any); o["name"] == name {
			o["value"], found = v, true
		}
	}
	g.Expect(found).To(BeTrue(), "the Cluster has the variable %s", name)
	g.Expect(unstructured.SetNestedSlice(c.Object, vars, "spec", "topology", "variables")).To(Succeed())
	return c
}

// setVariables sets topology variables of a Cluster in one patch (values are JSON).
func setVariables(ctx context.Context, ns, name string, values map[string]string) error {
	var c clusterv1.Cluster
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
		return err
	}
	patch := client.MergeFrom(c.DeepCopy())
	for i, v := range c.Spec.Topology.Variables {
		if value, ok := values[v.Name]; ok {
			c.Spec.Topology.Variables[i].Value.Raw = []byte(value)
		}
	}
	return mgmt.Client.Patch(ctx, &c, patch)
}

// startTopologyControllers runs CAPI's ClusterClass and Cluster topology controllers, which
// the harness does not run, in a manager of their own.
func startTopologyControllers(ctx context.Context, t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(mgmt.Env.Config, ctrl.Options{
		Scheme:  management.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	opts := controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: ptr.To(true)}
	if err := (&clusterclass.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, opts); err != nil {
		t.Fatal(err)
	}
	if err := (&topologycluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: mgmt.ClusterCache}).
		SetupWithManager(ctx, mgr, opts); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
}

// topologyDomain is the Cluster's windowsActiveDirectory: a join with account deletion and a gMSA
// hosts group through the manager's directory access, which the class's patch passes on whole.
func topologyDomain() map[string]any {
	return map[string]any{"domain": "corp.example.com", "organizationalUnit": "OU=Kubernetes,DC=corp,DC=example,DC=com",
		"credentials":      map[string]any{"name": "domain-join"},
		"computerAccounts": map[string]any{"deletePolicy": "Delete", "reuse": "Refuse"},
		"groups":           []any{"CN=WebApp01 hosts,OU=Groups,DC=corp,DC=example,DC=com"},
		"directory": map[string]any{"url": "ldaps://dc1.corp.example.com", "credentials": map[string]any{"name": "ad-cleanup"},
			"ca": map[string]any{"secret": map[string]any{"name": "corp-ca", "key": "ca.crt"}}}}
}
