package addons

import (
	"encoding/json"
	"io/fs"
	"path"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// overrides are non-default values: they must reach every place that uses them.
var overrides = map[string]string{
	"POD_CIDR":     "192.168.0.0/16",
	"SERVICE_CIDR": "10.112.0.0/12",
}

// clusterScoped are the kinds that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "RuntimeClass": true,
}

// TestManifestsDecode builds every addon, substitutes defaults (and then overrides) with
// clusterctl's processor and decodes every object strictly into its Kubernetes type.
func TestManifestsDecode(t *testing.T) {
	for _, vars := range []map[string]string{nil, overrides} {
		for _, sel := range Selections() {
			for _, name := range names(t, sel) {
				t.Run(sel.Infrastructure+"/"+sel.CNI+"/"+name, func(t *testing.T) {
					g := NewWithT(t)
					objs := decode(t, processedManifests(t, sel, name, vars))
					g.Expect(objs).NotTo(BeEmpty())
					for _, o := range objs {
						id := o.u.GetKind() + " " + o.u.GetName()
						// Only built-in kinds at the top (and the ServiceMonitor, decoded strictly into
						// servicemonitor_test.go's type): the CRD kinds (Calico's) go through the Job.
						g.Expect(o.typed).NotTo(BeNil(), "%s: not a built-in kind", id)
						g.Expect(o.u.GetNamespace() == "").To(Equal(clusterScoped[o.u.GetKind()]), "%s: namespace", id)
					}
				})
			}
		}
	}
}

// TestLiteralRoundTrip renders the ClusterResourceSets as clusterctl does and checks that every
// script reaches the workload cluster byte for byte.
func TestLiteralRoundTrip(t *testing.T) {
	g := NewWithT(t)
	seen := map[string]int{}
	var wrappers []object
	for _, sel := range []Selection{vcenterCalico, vcenterFlannel} {
		crs, err := ClusterResourceSets(sel)
		g.Expect(err).NotTo(HaveOccurred())
		wrappers = append(wrappers, decode(t, process(t, crs, nil))...)
	}
	for _, wrapper := range wrappers {
		cm, ok := wrapper.typed.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		for _, manifest := range cm.Data {
			for _, o := range decode(t, []byte(manifest)) {
				inner, ok := o.typed.(*corev1.ConfigMap)
				if !ok || inner.Annotations[LiteralDataAnnotation] != "true" {
					continue
				}
				for key, value := range inner.Data {
					g.Expect(value).To(Equal(string(scriptFile(t, key))), "%s/%s", inner.Name, key)
					seen[key]++
				}
			}
		}
	}
	// Every script is shipped, the kube-proxy one with both CNIs.
	g.Expect(seen).To(Equal(map[string]int{"install.sh": 1, "start-flanneld.ps1": 1, "start-kube-proxy.ps1": 2, "install-storage.sh": 2,
		"start-windows-exporter.ps1": 2}))
	var scripts []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if ext := path.Ext(p); ext == ".ps1" || ext == ".sh" {
			scripts = append(scripts, path.Base(p))
		}
		return err
	})
	g.Expect(scripts).To(ConsistOf("install.sh", "start-flanneld.ps1", "start-kube-proxy.ps1", "install-storage.sh", "start-windows-exporter.ps1"))
}

// podSpecs returns the pod templates of the workloads among objs, by workload name.
func podSpecs(objs []object) map[string]corev1.PodSpec {
	specs := map[string]corev1.PodSpec{}
	for _, o := range objs {
		switch w := o.typed.(type) {
		case *appsv1.DaemonSet:
			specs["DaemonSet "+w.Name] = w.Spec.Template.Spec
		case *appsv1.Deployment:
			specs["Deployment "+w.Name] = w.Spec.Template.Spec
		case *appsv1.StatefulSet:
			specs["StatefulSet "+w.Name] = w.Spec.Template.Spec
		case *batchv1.Job:
			specs["Job "+w.Name] = w.Spec.Template.Spec
		case *corev1.Pod:
			specs["Pod "+w.Name] = w.Spec
		}
	}
	return specs
}

// TestPodSpecs checks every pod of every addon: a Windows pod selects Windows nodes, runs as a
// HostProcess on the host network and tolerates os=windows:NoSchedule; any other pod selects
// Linux nodes.
func TestPodSpecs(t *testing.T) {
	windowsTaint := corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}
	total := 0
	for _, sel := range []Selection{vcenterCalico, vcenterFlannel} {
		for _, name := range names(t, sel) {
			for id, spec := range podSpecs(decode(t, processedManifests(t, sel, name, nil))) {
				t.Run(sel.CNI+"/"+name+"/"+id, func(t *testing.T) {
					g := NewWithT(t)
					total++
					switch spec.NodeSelector[corev1.LabelOSStable] {
					case "windows":
						sc := spec.SecurityContext
						g.Expect(sc).NotTo(BeNil())
						g.Expect(sc.WindowsOptions).NotTo(BeNil())
						g.Expect(sc.WindowsOptions.HostProcess).To(HaveValue(BeTrue()), "HostProcess")
						g.Expect(sc.WindowsOptions.RunAsUserName).To(HaveValue(Equal(`NT AUTHORITY\SYSTEM`)))
						g.Expect(spec.HostNetwork).To(BeTrue(), "hostNetwork")
						g.Expect(spec.Tolerations).To(ContainElement(windowsTaint))
					case "linux":
					default:
						t.Fatalf("nodeSelector %v: want kubernetes.io/os windows or linux", spec.NodeSelector)
					}
				})
			}
		}
	}
	// calico Job, flannel Linux + Windows, kube-proxy with both CNIs, storage (csi-proxy + Job),
	// the gMSA Job, windows_exporter and the node health checker with both (vCenter) CNIs.
	NewWithT(t).Expect(total).To(Equal(15))
}

// netConf is flannel's net-conf.json.
type netConf struct {
	Network string
	Backend struct {
		Type string
		VNI  int
		Port int
	}
}

// findConfigMap finds a ConfigMap by name.
func findConfigMap(t *testing.T, objs []object, name string) *corev1.ConfigMap {
	t.Helper()
	for _, o := range objs {
		if cm, ok := o.typed.(*corev1.ConfigMap); ok && cm.Name == name {
			return cm
		}
	}
	t.Fatalf("no ConfigMap %s", name)
	return nil
}

// TestFlannelNetwork checks that Linux and Windows flannel agree (network, VXLAN VNI 4096, port
// 4789) and that the Windows CNI config names the HNS network flanneld creates.
func TestFlannelNetwork(t *testing.T) {
	for _, vars := range []map[string]string{nil, overrides} {
		g := NewWithT(t)
		podCIDR, serviceCIDR := "10.244.0.0/16", "10.96.0.0/12"
		if vars != nil {
			podCIDR, serviceCIDR = vars["POD_CIDR"], vars["SERVICE_CIDR"]
		}
		objs := decode(t, processedManifests(t, vcenterFlannel, "flannel", vars))
		var linux, windows netConf
		g.Expect(json.Unmarshal([]byte(findConfigMap(t, objs, "kube-flannel-cfg").Data["net-conf.json"]), &linux)).To(Succeed())
		winCfg := findConfigMap(t, objs, "kube-flannel-windows-cfg")
		g.Expect(json.Unmarshal([]byte(winCfg.Data["net-conf.json"]), &windows)).To(Succeed())
		g.Expect(windows).To(Equal(linux))
		g.Expect(linux.Network).To(Equal(podCIDR))
		g.Expect(linux.Backend.Type).To(Equal("vxlan"))
		g.Expect(linux.Backend.VNI).To(Equal(4096))
		g.Expect(linux.Backend.Port).To(Equal(4789))

		var cni struct {
			Name     string
			Delegate struct {
				Type           string
				AdditionalArgs []struct {
					Value struct {
						Type     string
						Settings map[string]any
					}
				}
			}
		}
		g.Expect(json.Unmarshal([]byte(winCfg.Data["cni-conf.json"]), &cni)).To(Succeed())
		g.Expect(cni.Name).To(Equal("flannel.4096"))
		g.Expect(cni.Delegate.Type).To(Equal("sdnoverlay"))
		settings := map[string]map[string]any{}
		for _, a := range cni.Delegate.AdditionalArgs {
			settings[a.Value.Type] = a.Value.Settings
		}
		g.Expect(settings["OutBoundNAT"]["Exceptions"]).To(ConsistOf(serviceCIDR, podCIDR))
		g.Expect(settings["SDNROUTE"]["DestinationPrefix"]).To(Equal(serviceCIDR))
		g.Expect(settings).To(HaveKey("ProviderAddress"))
	}
}

// container returns the only container of a workload's pod.
func container(t *testing.T, objs []object, workload string) corev1.Container {
	t.Helper()
	spec, ok := podSpecs(objs)[workload]
	if !ok || len(spec.Containers) != 1 {
		t.Fatalf("%s: want one workload with one container", workload)
	}
	return spec.Containers[0]
}

func env(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// TestKubeProxyWindows checks both CNIs: the HNS network of the CNI, the cluster CIDR, the API
// endpoint, and one DaemonSet per Kubernetes version: named, selecting nodes and tagging capwin's
// image with the version, so nodes of another version never run it.
func TestKubeProxyWindows(t *testing.T) {
	for sel, network := range map[Selection]string{vcenterCalico: "Calico", vcenterFlannel: "flannel.4096"} {
		g := NewWithT(t)
		objs := decode(t, processedManifests(t, sel, "kube-proxy-windows", overrides))
		c := container(t, objs, "DaemonSet kube-proxy-windows-v1.36.3")
		g.Expect(env(c)).To(HaveKeyWithValue("CNI", sel.CNI))
		g.Expect(env(c)).To(HaveKeyWithValue("NETWORK_NAME", network))
		g.Expect(env(c)).To(HaveKeyWithValue("POD_CIDR", overrides["POD_CIDR"]))
		g.Expect(env(c)).To(HaveKeyWithValue("KUBERNETES_SERVICE_HOST", required["CONTROL_PLANE_ENDPOINT_IP"]))
		g.Expect(c.Image).To(Equal("ghcr.io/capwin/capwin-kube-proxy-windows:v1.36.3"))
		g.Expect(c.Command[len(c.Command)-1]).To(Equal("$env:CONTAINER_SANDBOX_MOUNT_POINT/mounts/scripts/start-kube-proxy.ps1"))
		for _, o := range objs {
			if ds, ok := o.typed.(*appsv1.DaemonSet); ok {
				version := map[string]string{"capwin.io/kubernetes-version": "v1.36.3"}
				g.Expect(ds.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("capwin.io/kubernetes-version", "v1.36.3"))
				g.Expect(ds.Spec.Selector.MatchLabels).To(HaveKeyWithValue("capwin.io/kubernetes-version", "v1.36.3"))
				g.Expect(ds.Spec.Template.Labels).To(HaveKeyWithValue("capwin.io/kubernetes-version", version["capwin.io/kubernetes-version"]))
			}
		}
		// Another version is another DaemonSet, on other nodes, with another image.
		next := decode(t, processedManifests(t, sel, "kube-proxy-windows", map[string]string{"KUBERNETES_VERSION": "v1.37.0"}))
		c = container(t, next, "DaemonSet kube-proxy-windows-v1.37.0")
		g.Expect(c.Image).To(Equal("ghcr.io/capwin/capwin-kube-proxy-windows:v1.37.0"))
		g.Expect(podSpecs(next)["DaemonSet kube-proxy-windows-v1.37.0"].NodeSelector).To(HaveKeyWithValue("capwin.io/kubernetes-version", "v1.37.0"))
	}
	NewWithT(t).Expect(scriptFile(t, "start-kube-proxy.ps1")).To(And(
		ContainSubstring("--proxy-mode=kernelspace"), Not(ContainSubstring("--feature-gates")),
		ContainSubstring("--source-vip="), ContainSubstring("--network-name="), ContainSubstring("Join-Path $root 'kube-proxy.exe'")))
}

// TestFlannelWindowsImage checks capwin's flanneld image and that the start script runs the
// flanneld.exe at its root.
func TestFlannelWindowsImage(t *testing.T) {
	g := NewWithT(t)
	c := container(t, decode(t, processedManifests(t, vcenterFlannel, "flannel", nil)), "DaemonSet kube-flannel-ds-windows")
	g.Expect(c.Image).To(Equal("ghcr.io/capwin/capwin-flanneld-windows:dev"))
	g.Expect(string(scriptFile(t, "start-flanneld.ps1"))).To(ContainSubstring("Join-Path $root 'flanneld.exe'"))
	linux := container(t, decode(t, processedManifests(t, vcenterFlannel, "flannel", nil)), "DaemonSet kube-flannel-ds")
	g.Expect(linux.Image).To(Equal("ghcr.io/flannel-io/flannel:v0.27.4"), "Linux flanneld matches the Windows one")
}

// TestCalicoInstallation checks the Installation the Job applies (VXLAN on POD_CIDR, HNS on
// Windows, BGP off, the service CIDR) and the pieces Calico for Windows and the Job need.
func TestCalicoInstallation(t *testing.T) {
	for _, vars := range []map[string]string{nil, overrides} {
		g := NewWithT(t)
		podCIDR, serviceCIDR := "10.244.0.0/16", "10.96.0.0/12"
		if vars != nil {
			podCIDR, serviceCIDR = vars["POD_CIDR"], vars["SERVICE_CIDR"]
		}
		objs := decode(t, processedManifests(t, vcenterCalico, "calico", vars))
		crs := decode(t, []byte(findConfigMap(t, objs, "calico-custom-resources").Data["custom-resources.yaml"]))
		kinds := map[string]*unstructured.Unstructured{}
		for _, o := range crs {
			g.Expect(o.u.GetAPIVersion()).To(Equal("operator.tigera.io/v1"))
			g.Expect(o.u.GetName()).To(Equal("default"))
			kinds[o.u.GetKind()] = o.u
		}
		g.Expect(kinds).To(HaveKey("APIServer"))
		inst := kinds["Installation"]
		g.Expect(inst).NotTo(BeNil())
		field := func(path ...string) any {
			v, _, err := unstructured.NestedFieldNoCopy(inst.Object, path...)
			g.Expect(err).NotTo(HaveOccurred())
			return v
		}
		g.Expect(field("spec", "calicoNetwork", "bgp")).To(Equal("Disabled"))
		g.Expect(field("spec", "calicoNetwork", "windowsDataplane")).To(Equal("HNS"))
		g.Expect(field("spec", "calicoNetwork", "linuxDataplane")).To(Equal("Iptables"))
		g.Expect(field("spec", "serviceCIDRs")).To(Equal([]any{serviceCIDR}))
		pools := field("spec", "calicoNetwork", "ipPools").([]any)
		g.Expect(pools).To(HaveLen(1))
		g.Expect(pools[0]).To(And(HaveKeyWithValue("cidr", podCIDR), HaveKeyWithValue("encapsulation", "VXLAN"),
			HaveKeyWithValue("natOutgoing", "Enabled")))

		endpoint := findConfigMap(t, objs, "kubernetes-services-endpoint")
		g.Expect(endpoint.Namespace).To(Equal("tigera-operator"))
		g.Expect(endpoint.Data).To(Equal(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.10", "KUBERNETES_SERVICE_PORT": "6443"}))

		job := podSpecs(objs)["Job calico-install"]
		g.Expect(job.HostNetwork).To(BeTrue())
		g.Expect(job.Tolerations).To(ContainElement(HaveField("Key", "node-role.kubernetes.io/control-plane")))
		c := job.Containers[0]
		g.Expect(c.Image).To(Equal("registry.k8s.io/kubectl:v1.36.3"))
		g.Expect(env(c)).To(And(HaveKeyWithValue("CALICO_VERSION", "v3.32.2"),
			HaveKeyWithValue("CALICO_MANIFESTS_URL", "https://raw.githubusercontent.com/projectcalico/calico")))
	}
	script := string(scriptFile(t, "install.sh"))
	for _, s := range []string{"operator-crds.yaml", "tigera-operator.yaml", "condition=Established", "/config/custom-resources.yaml"} {
		NewWithT(t).Expect(strings.Contains(script, s)).To(BeTrue(), "install.sh uses %s", s)
	}
}

// TestRuntimeClasses checks handlers and node selection of the Windows RuntimeClasses.
func TestRuntimeClasses(t *testing.T) {
	g := NewWithT(t)
	got := map[string]string{}
	for _, o := range decode(t, processedManifests(t, vcenterCalico, "runtimeclasses", nil)) {
		rc := o.u
		handler, _, _ := unstructured.NestedString(rc.Object, "handler")
		sel, _, _ := unstructured.NestedStringMap(rc.Object, "scheduling", "nodeSelector")
		g.Expect(sel).To(HaveKeyWithValue("kubernetes.io/os", "windows"))
		tol, _, _ := unstructured.NestedSlice(rc.Object, "scheduling", "tolerations")
		g.Expect(tol).To(ContainElement(map[string]any{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}))
		got[rc.GetName()] = handler + " " + sel["node.kubernetes.io/windows-build"] + sel["capwin.io/hyperv-isolation"]
	}
	g.Expect(got).To(Equal(map[string]string{
		"windows-2022":   "runhcs-wcow-process 10.0.20348",
		"windows-2025":   "runhcs-wcow-process 10.0.26100",
		"windows-hyperv": "runhcs-wcow-hypervisor true",
	}))
}
