//go:build e2e

package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	kubeadmv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/secret"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
)

// TestSimulator runs the simulator against an in-process vcsim and a fake management cluster
// (no Docker, no kind): a Linux control plane VM brings up the workload cluster's API at the
// endpoint, a Windows VM with capwin's real user data joins it, one with a wrong CA pin fails
// its join, and powered-off and deleted VMs take their Nodes and control plane with them.
func TestSimulator(t *testing.T) {
	ctrl.SetLogger(testr.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	srv := startVcsim(t)

	port := freePort(t)
	o := options{
		vcenter: srv.URL.String(), datacenter: "DC0", sourceVM: "DC0_C0_RP0_VM0", resourcePool: "/DC0/host/DC0_C0/Resources",
		templates:    pairs{"ubuntu-kube": "ubuntu64Guest", "windows-2022": "windows2019srvNext_64Guest"},
		builds:       pairs{"windows2019srvNext_64Guest": "20348"},
		endpointHost: "127.0.0.1", addressBase: "10.1", joinTimeout: 2 * time.Second,
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}

	cluster, mgmt, caCert := fakeManagement(t, o.endpointHost, port)

	o.debugPort = 0
	s, err := newSim(ctx, o, mgmt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.vc.ensureTemplates(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := s.vc.ensureTemplates(ctx, o); err != nil { // idempotent
		t.Fatal(err)
	}
	vc, err := govmomi.NewClient(ctx, srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := net.JoinHostPort(o.endpointHost, fmt.Sprint(port))
	step := func() {
		t.Helper()
		if err := s.step(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// The control plane machine.
	cp := addMachine(ctx, t, mgmt, vc, cluster, "c1-cp-x1", "ubuntu-kube", infrav1.OSLinux, true,
		[]byte("## template: jinja\n#cloud-config\nruncmd: [kubeadm init]\n"))
	eventually(t, step, func() error {
		if s.guests[string(cp.UID)] == nil || !s.guests[string(cp.UID)].booted {
			return fmt.Errorf("control plane guest not booted")
		}
		return nil
	})
	wl, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: caCert}})
	if err != nil {
		t.Fatal(err)
	}
	node, err := wl.CoreV1().Nodes().Get(ctx, "c1-cp-x1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the control plane Node over the endpoint, TLS verified by the cluster CA: %v", err)
	}
	if node.Spec.ProviderID != "" {
		t.Errorf("providerID %q: the Node must be left for capwin to link", node.Spec.ProviderID)
	}
	for _, c := range controlPlaneComponents {
		if _, err := wl.CoreV1().Pods(metav1.NamespaceSystem).Get(ctx, c+"-c1-cp-x1", metav1.GetOptions{}); err != nil {
			t.Errorf("static pod %s: %v", c, err)
		}
	}
	if _, err := wl.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "kubeadm-config", metav1.GetOptions{}); err != nil {
		t.Errorf("kubeadm-config: %v", err)
	}
	if ip := guestIP(ctx, t, vc, cp.Name); ip != "10.1.0.1" {
		t.Errorf("the control plane VM reports address %q", ip)
	}

	// The bootstrap provider's token in the workload cluster, then a Windows machine with
	// capwin's user data for it.
	pin := createBootstrapToken(ctx, t, wl, caCert)
	win := addMachine(ctx, t, mgmt, vc, cluster, "c1-windows-a1", "windows-2022", infrav1.OSWindows, false,
		windowsUserData(t, endpoint, "abcdef.0123456789abcdef", pin))

	// Held: the VM reports its address, the guest runs nothing until the annotation goes.
	machine := &clusterv1.Machine{}
	if err := mgmt.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: win.Name}, machine); err != nil {
		t.Fatal(err)
	}
	machine.Annotations = map[string]string{HoldGuestAnnotation: ""}
	if err := mgmt.Update(ctx, machine); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		step()
	}
	if g := s.guests[string(win.UID)]; g == nil || g.booted || !g.held {
		t.Fatalf("held guest: %+v", g)
	}
	if ip := guestIP(ctx, t, vc, win.Name); ip == "" {
		t.Error("the held guest reports no address")
	}
	if _, err := wl.CoreV1().Nodes().Get(ctx, "win-c1a1", metav1.GetOptions{}); err == nil {
		t.Error("the held guest joined")
	}
	delete(machine.Annotations, HoldGuestAnnotation)
	if err := mgmt.Update(ctx, machine); err != nil {
		t.Fatal(err)
	}
	eventually(t, step, func() error {
		g := s.guests[string(win.UID)]
		if g == nil || !g.booted {
			return fmt.Errorf("Windows guest not booted")
		}
		return nil
	})
	if r := report(ctx, t, vc, win.Name); r.State != simguest.StateSucceeded || r.Step != "finish" {
		t.Errorf("Windows bootstrap report: %+v", r)
	}
	wnode, err := wl.CoreV1().Nodes().Get(ctx, "win-c1a1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Windows Node: %v", err)
	}
	if got := wnode.Labels[corev1.LabelWindowsBuild]; got != "10.0.20348" {
		t.Errorf("windows-build label %q", got)
	}
	if got := wnode.Labels["capwin.io/windows-version"]; got != "ltsc2022" {
		t.Errorf("label from the user data: %q (labels %v)", got, wnode.Labels)
	}
	if !hasTaint(wnode, "os", "windows", corev1.TaintEffectNoSchedule) {
		t.Errorf("taints %v", wnode.Spec.Taints)
	}

	// Its logs, as vcsim's guest operations collect them (the VM runs VMware Tools).
	ref := vmByName(ctx, t, vc, win.Name).Reference().Value
	logs := vcenterGuestLogs(t, s, ref)
	if got := logs["files/C/var/log/kubelet/kubelet.log"]; !strings.Contains(got, `node="win-c1a1"`) {
		t.Errorf("kubelet log of the joined node: %q (files %d)", got, len(logs))
	}
	var mvm mo.VirtualMachine
	if vm := vmByName(ctx, t, vc, win.Name); vm.Properties(ctx, vm.Reference(), []string{"guest.toolsRunningStatus"}, &mvm) != nil {
		t.Fatal("read the VM's guest.toolsRunningStatus")
	} else if mvm.Guest == nil || mvm.Guest.ToolsRunningStatus != string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
		t.Errorf("VMware Tools of the Windows VM: %+v", mvm.Guest)
	}

	// A Windows machine whose user data pins another CA fails its join, and says so.
	bad := addMachine(ctx, t, mgmt, vc, cluster, "c1-windows-b2", "windows-2022", infrav1.OSWindows, false,
		windowsUserData(t, endpoint, "abcdef.0123456789abcdef", "sha256:"+hex.EncodeToString(make([]byte, 32))))
	eventually(t, step, func() error {
		g := s.guests[string(bad.UID)]
		if g == nil || !g.booted {
			return fmt.Errorf("guest not done")
		}
		return nil
	})
	if r := report(ctx, t, vc, bad.Name); r.State != simguest.StateFailed || r.Step != "join" {
		t.Errorf("report of the guest with a wrong CA pin: %+v", r)
	}

	// Deleting the Windows VM deletes its Node; deleting the control plane VM closes the endpoint.
	destroy(ctx, t, vc, win.Name)
	eventually(t, step, func() error {
		if _, err := wl.CoreV1().Nodes().Get(ctx, "win-c1a1", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("the Node of the deleted VM is still there")
		}
		return nil
	})
	destroy(ctx, t, vc, cp.Name)
	eventually(t, step, func() error {
		if _, err := wl.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
			return fmt.Errorf("the endpoint still answers without a control plane")
		}
		return nil
	})

	// The Cluster goes: its workload cluster goes with it, and the port is free for the next.
	if err := mgmt.Delete(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	step()
	if len(s.workloads) != 0 {
		t.Errorf("workload clusters left: %v", s.workloads)
	}
}

func windowsUserData(t *testing.T, endpoint, token, pin string) []byte {
	t.Helper()
	data, err := userdata.Render(userdata.Input{
		Format:            userdata.FormatCloudConfig,
		KubernetesVersion: "v1.36.3",
		Join:              userdata.Join{APIServerEndpoint: endpoint, Token: token, CACertHashes: []string{pin}, CRISocket: "npipe:////./pipe/containerd-containerd"},
		Labels:            map[string]string{"capwin.io/windows-version": "ltsc2022"},
		Taints:            []userdata.Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}},
		PauseImage:        "registry.k8s.io/pause:3.10",
		CNI:               userdata.CNI{Plugin: "calico", VXLANVNI: 4096, VXLANPort: 4789},
		Binaries:          userdata.Binaries{Directory: `C:\k`},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// addMachine is what Cluster API and capwin would leave: a Machine, its VCenterMachine, and a
// powered-on VM (instance UUID = the VCenterMachine's UID) with user data and metadata in guestinfo.
func addMachine(ctx context.Context, t *testing.T, mgmt client.Client, vc *govmomi.Client, cluster *clusterv1.Cluster,
	name, template string, osType infrav1.OperatingSystem, controlPlane bool, data []byte) *infrav1.VCenterMachine {
	t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: labels},
		Spec:       clusterv1.MachineSpec{ClusterName: cluster.Name, Version: "v1.36.3"},
	}
	uid := apitypes.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", len(name)*1000+int(name[len(name)-1])))
	im := &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, UID: uid, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: "m-" + uid}}},
		Spec: infrav1.VCenterMachineSpec{Template: template, OS: osType},
	}
	for _, o := range []client.Object{m, im} {
		if err := mgmt.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := mgmt.Get(ctx, client.ObjectKeyFromObject(im), im); err != nil {
		t.Fatal(err)
	}
	f := find.NewFinder(vc.Client, true)
	dc, err := f.Datacenter(ctx, "DC0")
	if err != nil {
		t.Fatal(err)
	}
	f.SetDatacenter(dc)
	tmpl, err := f.VirtualMachine(ctx, template)
	if err != nil {
		t.Fatal(err)
	}
	folder, _ := f.DefaultFolder(ctx)
	pool, _ := f.ResourcePool(ctx, "/DC0/host/DC0_C0/Resources")
	poolRef := pool.Reference()
	hostname := name
	if osType == infrav1.OSWindows {
		hostname = "WIN-C1" + name[len(name)-2:] // a NetBIOS computer name, as capwin gives Windows guests
	}
	meta := fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", im.UID, hostname)
	task, err := tmpl.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Pool: &poolRef},
		Config: &types.VirtualMachineConfigSpec{InstanceUuid: string(im.UID), ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: "guestinfo.userdata", Value: base64.StdEncoding.EncodeToString(data)},
			&types.OptionValue{Key: "guestinfo.userdata.encoding", Value: "base64"},
			&types.OptionValue{Key: "guestinfo.metadata", Value: base64.StdEncoding.EncodeToString([]byte(meta))},
			&types.OptionValue{Key: "guestinfo.metadata.encoding", Value: "base64"},
		}},
		PowerOn: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := task.WaitForResult(ctx); err != nil {
		t.Fatal(err)
	}
	return im
}

func vmByName(ctx context.Context, t *testing.T, vc *govmomi.Client, name string) *object.VirtualMachine {
	t.Helper()
	f := find.NewFinder(vc.Client, true)
	dc, _ := f.Datacenter(ctx, "DC0")
	f.SetDatacenter(dc)
	v, err := f.VirtualMachine(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func extraConfig(ctx context.Context, t *testing.T, vc *govmomi.Client, name string) (map[string]string, string) {
	t.Helper()
	v := vmByName(ctx, t, vc, name)
	var m mo.VirtualMachine
	if err := v.Properties(ctx, v.Reference(), []string{"config.extraConfig", "guest.ipAddress"}, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range m.Config.ExtraConfig {
		ov := o.GetOptionValue()
		out[ov.Key], _ = ov.Value.(string)
	}
	ip := ""
	if m.Guest != nil {
		ip = m.Guest.IpAddress
	}
	return out, ip
}

func guestIP(ctx context.Context, t *testing.T, vc *govmomi.Client, name string) string {
	_, ip := extraConfig(ctx, t, vc, name)
	return ip
}

func report(ctx context.Context, t *testing.T, vc *govmomi.Client, name string) simguest.Report {
	t.Helper()
	ec, _ := extraConfig(ctx, t, vc, name)
	var r simguest.Report
	if err := json.Unmarshal([]byte(ec[userdata.StatusGuestinfoKey]), &r); err != nil {
		t.Fatalf("report of %s: %v (%q)", name, err, ec[userdata.StatusGuestinfoKey])
	}
	return r
}

func destroy(ctx context.Context, t *testing.T, vc *govmomi.Client, name string) {
	t.Helper()
	v := vmByName(ctx, t, vc, name)
	if task, err := v.PowerOff(ctx); err == nil {
		_ = task.Wait(ctx)
	}
	task, err := v.Destroy(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func hasTaint(n *corev1.Node, key, value string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Value == value && t.Effect == effect {
			return true
		}
	}
	return false
}

// eventually runs step until check passes (20 s at most).
func eventually(t *testing.T, step func(), check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		step()
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t *testing.T) int32 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

// TestConfigThumbprint checks that VSPHERE_TLS_THUMBPRINT in the e2e config is the fingerprint
// of vcsim's certificate in ../../data/simulators.yaml, in govmomi's format.
func TestConfigThumbprint(t *testing.T) {
	data, err := os.ReadFile("../../data/simulators.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crt string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var sec corev1.Secret
		if yaml.Unmarshal([]byte(doc), &sec) == nil && sec.Kind == "Secret" && sec.Name == "vcsim-tls" {
			crt = sec.StringData[corev1.TLSCertKey]
		}
	}
	block, _ := pem.Decode([]byte(crt))
	if block == nil {
		t.Fatal("no vcsim-tls certificate in simulators.yaml")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	cfgData, err := os.ReadFile("../../config/capwin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Variables map[string]string `json:"variables"`
	}
	if err := yaml.Unmarshal(cfgData, &cfg); err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Variables["VSPHERE_TLS_THUMBPRINT"], soap.ThumbprintSHA256(cert); got != want {
		t.Errorf("VSPHERE_TLS_THUMBPRINT is %q, vcsim's certificate is %q", got, want)
	}
}

// fakeManagement is the management cluster the simulator reads: a Cluster whose endpoint is the
// simulator's, with its cluster and etcd CAs; and the cluster CA's certificate.
func fakeManagement(t *testing.T, host string, port int32) (*clusterv1.Cluster, client.Client, []byte) {
	t.Helper()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
		Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: host, Port: port}},
	}
	cas := secret.NewCertificatesForInitialControlPlane(&kubeadmv1.ClusterConfiguration{})
	if err := cas.Generate(); err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{cluster}
	for _, p := range []secret.Purpose{secret.ClusterCA, secret.EtcdCA} {
		objs = append(objs, cas.GetByPurpose(p).AsSecret(client.ObjectKeyFromObject(cluster), metav1.OwnerReference{}))
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, infrav1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return cluster, fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), cas.GetByPurpose(secret.ClusterCA).KeyPair.Cert
}

// createBootstrapToken creates the bootstrap token abcdef.0123456789abcdef in the workload
// cluster, as capwin's bootstrap provider does, and returns the CA pin of the cluster CA.
func createBootstrapToken(ctx context.Context, t *testing.T, wl kubernetes.Interface, caCert []byte) string {
	t.Helper()
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-abcdef"},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey: []byte("abcdef"), bootstrapapi.BootstrapTokenSecretKey: []byte("0123456789abcdef"),
			bootstrapapi.BootstrapTokenUsageSigningKey: []byte("true"), bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
			bootstrapapi.BootstrapTokenExpirationKey: []byte(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)),
		},
	}
	if _, err := wl.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, token, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca, err := certs.DecodeCertPEM(caCert)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ca.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// startVcsim serves vcsim's default VPX model over TLS until the test ends.
func startVcsim(t *testing.T) *simulator.Server {
	t.Helper()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	model.Service.TLS = new(tls.Config)
	srv := model.Service.NewServer()
	t.Cleanup(srv.Close)
	return srv
}

// A Cluster deleted and made again under its name between two polls (docs/sandbox.md does that:
// the Hyper-V cluster win1 right after the vCenter one) is a new workload cluster: its store and
// listener are made anew, not the old one's kept with the old cluster's CA and objects.
func TestWorkloadMadeAgainUnderItsName(t *testing.T) {
	ctrl.SetLogger(testr.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startVcsim(t)
	port := freePort(t)
	o := options{vcenter: srv.URL.String(), datacenter: "DC0", sourceVM: "DC0_C0_RP0_VM0", resourcePool: "/DC0/host/DC0_C0/Resources",
		templates: pairs{"windows-2022": "windows2019srvNext_64Guest"}, endpointHost: "127.0.0.1", addressBase: "10.1"}
	cluster, mgmt, _ := fakeManagement(t, o.endpointHost, port)
	s, err := newSim(ctx, o, mgmt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	c := *cluster.DeepCopy()
	key := client.ObjectKeyFromObject(&c)
	for _, uid := range []apitypes.UID{"first", "second"} {
		c.UID = uid
		s.syncWorkloads(ctx, []clusterv1.Cluster{c})
		if w := s.workloads[key]; w == nil || w.uid != uid {
			t.Fatalf("after Cluster %s (UID %s) the simulator serves %+v", key, uid, w)
		}
	}
}
