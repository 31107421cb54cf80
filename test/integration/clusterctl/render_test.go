package clusterctl_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/release"
)

// required are the variables each flavor cannot do without: what clusterctl sets from its
// flags, where the VMs go, the login, the images and the API address. Everything else has a
// default; adding a required variable is a deliberate change of this list.
var required = map[string][]string{
	"windows": {"CLUSTER_NAME", "CONTROL_PLANE_ENDPOINT_IP", "CONTROL_PLANE_MACHINE_COUNT", "KUBERNETES_VERSION",
		"LINUX_TEMPLATE", "VSPHERE_DATACENTER", "VSPHERE_NETWORK", "VSPHERE_PASSWORD", "VSPHERE_SERVER",
		"VSPHERE_TLS_THUMBPRINT", "VSPHERE_USERNAME", "WINDOWS_TEMPLATE", "WORKER_MACHINE_COUNT"},
	"hyperv-windows": {"CLUSTER_NAME", "CONTROL_PLANE_ENDPOINT_IP", "CONTROL_PLANE_MACHINE_COUNT", "HYPERV_HOSTS",
		"HYPERV_PASSWORD", "HYPERV_SWITCH", "HYPERV_USERNAME", "KUBERNETES_VERSION", "LINUX_TEMPLATE",
		"WINDOWS_TEMPLATE", "WORKER_MACHINE_COUNT"},
}

// requiredOf is a flavor's required variables: those of its shape (a -flannel twin has its
// Calico flavor's, and windows-topology has windows').
func requiredOf(flavor string) []string {
	base := strings.TrimSuffix(strings.TrimSuffix(flavor, "-flannel"), "-topology")
	return required[base]
}

// shared are the variables of the concepts every flavor has, with one name and one default
// everywhere: the machines' images (a vSphere template or a parent VHDX) and sizes, the Windows
// version, the SSH keys.
var shared = []string{"LINUX_TEMPLATE", "WINDOWS_TEMPLATE", "CONTROL_PLANE_NUM_CPUS", "CONTROL_PLANE_MEMORY_MIB", "CONTROL_PLANE_DISK_GIB",
	"WINDOWS_NUM_CPUS", "WINDOWS_MEMORY_MIB", "WINDOWS_DISK_GIB", "WINDOWS_VERSION",
	"LINUX_SSH_AUTHORIZED_KEYS", "WINDOWS_SSH_AUTHORIZED_KEYS"}

// TestSharedVariables checks that every flavor exposes the shared concepts under the same names
// with the same defaults.
func TestSharedVariables(t *testing.T) {
	g := NewWithT(t)
	cfg := localRepo(t, nil)
	defaults := map[string]*string{}
	for _, flavor := range release.Flavors {
		tmpl, err := generate(context.Background(), cfg, kubeconfig, "default", flavor, true)
		g.Expect(err).NotTo(HaveOccurred())
		vars := tmpl.VariableMap()
		for _, name := range shared {
			g.Expect(vars).To(HaveKey(name), "flavor %s", flavor)
			if d, ok := defaults[name]; ok {
				g.Expect(vars[name]).To(Equal(d), "%s in flavor %s", name, flavor)
			}
			defaults[name] = vars[name]
		}
	}
}

// TestListVariables lists each flavor's variables offline, as docs/quickstart.md does before
// clusterctl init: with the target namespace and the provider version given, clusterctl needs
// no management cluster (KUBECONFIG names no file, and no kubeconfig is given).
func TestListVariables(t *testing.T) {
	g := NewWithT(t)
	cfg := localRepo(t, nil)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, flavor := range release.Flavors {
		tmpl, err := generate(context.Background(), cfg, "", "default", flavor, true)
		g.Expect(err).NotTo(HaveOccurred())
		var req []string
		for name, def := range tmpl.VariableMap() {
			if def == nil {
				req = append(req, name)
			}
		}
		slices.Sort(req)
		g.Expect(req).To(Equal(requiredOf(flavor)), "required variables of flavor %s", flavor)
	}
}

// diskValues are the WINDOWS_DATA_DISKS and WINDOWS_DISKS values a flavor is rendered with: the
// Hyper-V flavors and windows-flannel get a data disk and the WindowsConfigTemplate disk at its
// SCSI address (the first Hyper-V data disk is at location 1: target 0, LUN 1; the first vSphere
// one is unit 1 of a one-disk template: target 1, LUN 0); windows keeps the defaults.
func diskValues(flavor string) map[string]string {
	switch {
	case strings.HasPrefix(flavor, "hyperv"):
		return map[string]string{
			"WINDOWS_DATA_DISKS": `[{name: data, sizeGiB: 50, type: Fixed}]`,
			"WINDOWS_DISKS":      `[{location: {target: 0, lun: 1}, fileSystem: ReFS, label: data, mountPath: 'C:\data'}]`,
		}
	case flavor == "windows-flannel":
		return map[string]string{
			"WINDOWS_DATA_DISKS": `[{name: containerd, sizeGiB: 100, provisioning: Thick}]`,
			"WINDOWS_DISKS":      `[{location: {target: 1, lun: 0}, label: containerd, driveLetter: E}]`,
		}
	}
	return nil
}

// renderedDisks is what diskValues must become in the Windows workers' machine template
// (dataDisks) and WindowsConfigTemplate (disks), in the numbers of the YAML decoder.
func renderedDisks(flavor string) (dataDisks, disks []any) {
	switch {
	case strings.HasPrefix(flavor, "hyperv"):
		return []any{map[string]any{"name": "data", "sizeGiB": float64(50), "type": "Fixed"}},
			[]any{map[string]any{"location": map[string]any{"target": float64(0), "lun": float64(1)},
				"fileSystem": "ReFS", "label": "data", "mountPath": `C:\data`}}
	case flavor == "windows-flannel":
		return []any{map[string]any{"name": "containerd", "sizeGiB": float64(100), "provisioning": "Thick"}},
			[]any{map[string]any{"location": map[string]any{"target": float64(1), "lun": float64(0)},
				"label": "containerd", "driveLetter": "E"}}
	}
	return nil, nil
}

// defaultReservations is the kubelet configuration of the flavors' Windows workers with the
// reservation variables' defaults (docs/kubelet.md#system-reservations).
var defaultReservations = map[string]any{
	"systemReserved": map[string]any{"cpu": "500m", "memory": "2Gi"},
	"kubeReserved":   map[string]any{"cpu": "250m", "memory": "512Mi"},
	"evictionHard":   map[string]any{"memory.available": "500Mi", "nodefs.available": "10%", "imagefs.available": "15%"},
}

// autoscalerAnnotations are the Windows MachineDeployment's capacity annotations with the
// variables' defaults: the taint the bootstrap sets and the node labels of the WindowsConfigTemplate.
var autoscalerAnnotations = map[string]string{
	"capacity.cluster-autoscaler.kubernetes.io/taints": "os=windows:NoSchedule",
	"capacity.cluster-autoscaler.kubernetes.io/labels": "capwin.io/windows-version=ltsc2022,capwin.io/hyperv-isolation=false",
}

// TestRenderAndDryRun renders the non-topology flavors and applies every object with
// server-side dry run: CRD schemas, CEL rules and the admission webhooks of CAPI and capwin.
func TestRenderAndDryRun(t *testing.T) {
	for _, flavor := range []string{"windows", "hyperv-windows", "windows-flannel", "hyperv-windows-flannel"} {
		t.Run(flavor, func(t *testing.T) {
			g := NewWithT(t)
			values := map[string]string{}
			maps.Copy(values, imagesFor(flavor))
			maps.Copy(values, diskValues(flavor))
			maps.Copy(values, vmPolicyValues(flavor))
			cfg := localRepo(t, values)
			ctx := context.Background()
			ns := namespace(ctx, t, "render-"+flavor)
			tmpl, err := generate(ctx, cfg, kubeconfig, ns, flavor, false)
			g.Expect(err).NotTo(HaveOccurred())
			objs := tmpl.Objs()
			for i := range objs {
				g.Expect(apply(ctx, &objs[i], client.DryRunAll)).To(Succeed(), "%s %s", objs[i].GetKind(), objs[i].GetName())
			}
			checkRendered(g, objs)
			checkDisks(g, flavor, objs)
			checkVMPolicy(g, flavor, objs)
			checkOneCNI(g, flavor, objs)
			dryRunAddons(ctx, t, objs)
		})
	}
}

// checkDisks checks that WINDOWS_DATA_DISKS reaches the Windows workers' machine template only
// (the Linux control plane's has no dataDisks) and WINDOWS_DISKS the WindowsConfigTemplate; with
// the defaults both lists are empty.
func checkDisks(g Gomega, flavor string, objs []unstructured.Unstructured) {
	wantData, wantDisks := renderedDisks(flavor)
	templates := 0
	for _, o := range objs {
		switch o.GetKind() {
		case "VCenterMachineTemplate", "HyperVMachineTemplate":
			templates++
			os, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "os")
			dataDisks, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "dataDisks")
			if os == "Windows" && wantData != nil {
				g.Expect(dataDisks).To(Equal(wantData), "%s %s: dataDisks %s", o.GetKind(), o.GetName(), diskValues(flavor)["WINDOWS_DATA_DISKS"])
			} else {
				g.Expect(dataDisks).To(BeEmpty(), "%s %s (%s): dataDisks", o.GetKind(), o.GetName(), os)
			}
		case "WindowsConfigTemplate":
			disks, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "disks")
			if wantDisks != nil {
				g.Expect(disks).To(Equal(wantDisks), "WindowsConfigTemplate %s: disks %s", o.GetName(), diskValues(flavor)["WINDOWS_DISKS"])
			} else {
				g.Expect(disks).To(BeEmpty())
			}
		}
	}
	g.Expect(templates).To(Equal(2), "a control-plane and a Windows machine template")
}

// checkRendered checks what the values must become: strings stay strings, the MachineDeployment
// points at the template of WINDOWS_VERSION, the control plane carries kube-vip on the endpoint.
func checkRendered(g Gomega, objs []unstructured.Unstructured) {
	byKind := map[string][]unstructured.Unstructured{}
	for _, o := range objs {
		byKind[o.GetKind()] = append(byKind[o.GetKind()], o)
	}
	g.Expect(slices.Sorted(maps.Keys(byKind))).To(ContainElements("Cluster", "KubeadmControlPlane",
		"MachineDeployment", "MachineHealthCheck", "WindowsConfigTemplate", "Secret", "ClusterResourceSet", "ConfigMap"))
	cluster := byKind["Cluster"][0]
	g.Expect(cluster.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/cluster-name", "win1"))
	md := byKind["MachineDeployment"][0]
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	g.Expect(ref).To(Equal("win1-windows-ltsc2022"))
	g.Expect(md.GetAnnotations()).To(Equal(autoscalerAnnotations), "what the cluster autoscaler needs to scale the Windows workers from zero")
	ref, _, _ = unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	g.Expect(ref).To(Equal("win1-windows-ltsc2022"))
	boot := byKind["WindowsConfigTemplate"][0].Object
	labels, _, _ := unstructured.NestedStringMap(boot, "spec", "template", "spec", "nodeRegistration", "labels")
	g.Expect(labels).To(Equal(map[string]string{"capwin.io/windows-version": "ltsc2022", "capwin.io/hyperv-isolation": "false"}))
	// The defaults of the registry and domain variables leave the node as without them (checkDisks
	// checks the disk variables).
	registries, _, _ := unstructured.NestedSlice(boot, "spec", "template", "spec", "containerd", "registries")
	g.Expect(registries).To(BeEmpty())
	g.Expect(boot).To(HaveKeyWithValue("spec", HaveKeyWithValue("template", HaveKeyWithValue("spec", HaveKeyWithValue("activeDirectory", BeNil())))))
	prePull, found, _ := unstructured.NestedSlice(boot, "spec", "template", "spec", "prePull", "images")
	g.Expect(found).To(BeTrue())
	g.Expect(prePull).To(BeEmpty(), "WINDOWS_PREPULL_IMAGES defaults to no image")
	kubelet, _, _ := unstructured.NestedMap(boot, "spec", "template", "spec", "kubeletConfiguration")
	g.Expect(kubelet).To(Equal(defaultReservations), "the Windows system reservations of Kubernetes' guidance")
	for _, kind := range []string{"VCenterMachineTemplate", "HyperVMachineTemplate"} {
		for _, t := range byKind[kind] {
			nics, _, _ := unstructured.NestedSlice(t.Object, "spec", "template", "spec", "network")
			g.Expect(nics).To(ConsistOf(HaveKeyWithValue("dhcp4", true)), "%s %s: the NIC asks for an address", kind, t.GetName())
		}
	}
	replicas, _, _ := unstructured.NestedFieldNoCopy(md.Object, "spec", "replicas")
	g.Expect(replicas).To(BeEquivalentTo(2), "spec.replicas is the number WORKER_MACHINE_COUNT, not a string")
	files, _, _ := unstructured.NestedSlice(byKind["KubeadmControlPlane"][0].Object, "spec", "kubeadmConfigSpec", "files")
	g.Expect(files).To(HaveLen(1))
	content := files[0].(map[string]any)["content"].(string)
	g.Expect(content).To(ContainSubstring(`value: "10.0.0.10"`))
	g.Expect(content).To(ContainSubstring(`{name: vip_interface, value: ""}`))
	for _, hc := range byKind["HyperVCluster"] {
		// The hosts log in with the Secret the flavor creates, whatever HYPERV_HOSTS says.
		ref, _, _ := unstructured.NestedString(hc.Object, "spec", "credentialsRef", "name")
		g.Expect(ref).To(Equal(byKind["Secret"][0].GetName()))
		g.Expect(ref).To(Equal("win1-hyperv"))
	}
	for _, s := range byKind["Secret"] {
		var secret corev1.Secret
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(s.Object, &secret)).To(Succeed())
		g.Expect(secret.StringData["password"]).To(BeElementOf(testValues["VSPHERE_PASSWORD"], testValues["HYPERV_PASSWORD"]))
		g.Expect(secret.StringData["username"]).To(BeElementOf(testValues["VSPHERE_USERNAME"], testValues["HYPERV_USERNAME"]))
	}
}

// namespace creates a namespace for one rendering.
func namespace(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.Name = strings.ToLower(name)
	if err := mgmt.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// apply server-side applies a copy of an object, as kubectl apply --server-side would.
func apply(ctx context.Context, obj *unstructured.Unstructured, opts ...client.ApplyOption) error {
	opts = append(opts, client.FieldOwner("clusterctl-test"), client.ForceOwnership)
	return mgmt.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), opts...)
}

// dryRunAddons applies what each addon ConfigMap of a rendered flavor would put into the workload
// cluster (pod network, kube-proxy, RuntimeClasses, storage) with server-side dry run; their
// namespaces are created for real first. The test apiserver stands in for the workload cluster.
func dryRunAddons(ctx context.Context, t *testing.T, objs []unstructured.Unstructured) {
	t.Helper()
	g := NewWithT(t)
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || o.GetLabels()["capwin.io/addon"] == "" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		for key, manifest := range data {
			inner, err := utilyaml.ToUnstructured([]byte(manifest))
			g.Expect(err).NotTo(HaveOccurred(), key)
			for i := range inner {
				if inner[i].GetKind() == "Namespace" {
					err := mgmt.Client.Create(ctx, inner[i].DeepCopy())
					g.Expect(err == nil || apierrors.IsAlreadyExists(err)).To(BeTrue(), "%s: %v", key, err)
				}
			}
			for i := range inner {
				if inner[i].GroupVersionKind().Group == "monitoring.coreos.com" {
					continue // the Prometheus Operator's CRD is not in this API server (templates/addons decodes it strictly)
				}
				g.Expect(apply(ctx, &inner[i], client.DryRunAll)).To(Succeed(), "%s: %s %s", key, inner[i].GetKind(), inner[i].GetName())
			}
		}
	}
}

// imagesFor is what LINUX_TEMPLATE and WINDOWS_TEMPLATE hold for a flavor: vSphere template names
// (testValues) on vCenter, parent VHDX paths on Hyper-V.
func imagesFor(flavor string) map[string]string {
	if !strings.HasPrefix(flavor, "hyperv") {
		return nil
	}
	return map[string]string{"LINUX_TEMPLATE": `D:\images\ubuntu-2404.vhdx`, "WINDOWS_TEMPLATE": `D:\images\windows-2022.vhdx`}
}
