//go:build e2e

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/guestos"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
)

// Parent disks of the simulated Hyper-V hosts in the tests.
const (
	testLinuxDisk   = `D:\images\ubuntu-2404.vhdx`
	testWindowsDisk = `D:\images\windows-2022.vhdx`
)

// TestSimulatorHyperV drives the simulator's Hyper-V hosts with capwin's own WinRM client (HTTPS
// pinned by caBundle, NTLM), as the provider does: a Linux control plane VM on hv1 brings up the
// workload cluster's API, a Windows VM on hv2 reads capwin's user data from its cidata drive,
// joins and reports success in its KVP item, a Windows VM on a Linux parent disk fails its
// preflight, removing a VM deletes its Node and turning the control plane VM off closes the
// endpoint.
func TestSimulatorHyperV(t *testing.T) {
	ctrl.SetLogger(testr.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	srv := startVcsim(t)

	certFile, keyFile, caPEM := testCertificate(t, "localhost")
	hosts := fmt.Sprintf("[{name: hv1, address: localhost, port: %d, credentialsRef: {name: hyperv-hosts}, caBundle: %s},"+
		" {name: hv2, address: localhost, port: %d, credentialsRef: {name: hyperv-hosts}, caBundle: %s}]",
		freePort(t), base64.StdEncoding.EncodeToString(caPEM), freePort(t), base64.StdEncoding.EncodeToString(caPEM))
	port := freePort(t)
	o := options{
		vcenter: srv.URL.String(), datacenter: "DC0", sourceVM: "DC0_C0_RP0_VM0", resourcePool: "/DC0/host/DC0_C0/Resources",
		templates: pairs{"ubuntu-kube": "ubuntu64Guest"}, builds: pairs{},
		endpointHost: "127.0.0.1", addressBase: "10.2", joinTimeout: 2 * time.Second,
		hypervHosts: hosts, hypervUser: "capwin", hypervPassword: "Host-pw1", hypervCert: certFile, hypervKey: keyFile,
		hypervSwitch: "capwin-e2e", hypervDisks: pairs{testLinuxDisk: hypervLinuxDisk, testWindowsDisk: "20348"},
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}

	cluster, mgmt, caCert := fakeManagement(t, o.endpointHost, port)
	s, err := newSim(ctx, o, mgmt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	step := func() {
		t.Helper()
		if err := s.step(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// The provider's side: the hosts as the HyperVCluster names them, reached with capwin's client.
	specs, err := parseHyperVHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	conns := map[string]*hyperv.Conn{}
	for _, h := range specs {
		conns[h.Name], err = hyperv.Dial(hyperv.HostConfig{Name: h.Name, Address: h.Address, Port: int(h.Port),
			Username: o.hypervUser, Password: o.hypervPassword, CABundle: h.CABundle}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var info wire.HostInfo
		if err := conns[h.Name].Run(ctx, wire.OpHost, hvFolders, &info); err != nil {
			t.Fatalf("host %s over WinRM, certificate pinned by caBundle: %v", h.Name, err)
		}
		if info.Name != h.Name || strings.Join(info.Switches, ",") != o.hypervSwitch {
			t.Errorf("host info %+v", info)
		}
	}
	unpinned, _ := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: "localhost", Port: int(specs[0].Port),
		Username: o.hypervUser, Password: o.hypervPassword}, 10*time.Second)
	if err := unpinned.Run(ctx, wire.OpHost, hvFolders, nil); hyperv.KindOf(err) != wire.KindTLS {
		t.Errorf("a client without the caBundle: %v, want a TLS error", err)
	}
	endpoint := net.JoinHostPort(o.endpointHost, fmt.Sprint(port))

	// The control plane machine on hv1.
	cp := addHyperVMachine(ctx, t, mgmt, conns["hv1"], cluster, "c1-cp-x1", testLinuxDisk, infrav1.OSLinux, true,
		[]byte("## template: jinja\n#cloud-config\nruncmd: [kubeadm init]\n"))
	eventually(t, step, func() error {
		if g := s.guests[hypervKey("hv1", cp.id)]; g == nil || !g.booted {
			return fmt.Errorf("control plane guest not booted")
		}
		return nil
	})
	wl, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: caCert}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wl.CoreV1().Nodes().Get(ctx, "c1-cp-x1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the control plane Node over the endpoint: %v", err)
	}
	if v := findVM(ctx, t, conns["hv1"], cp); !v.Heartbeat || len(v.NICs) != 1 || strings.Join(v.NICs[0].IPs, ",") != "10.2.0.1" {
		t.Errorf("the control plane VM as the provider sees it: heartbeat %v, NICs %+v", v.Heartbeat, v.NICs)
	}

	// A Windows machine on hv2 with capwin's user data for a token of the workload cluster.
	pin := createBootstrapToken(ctx, t, wl, caCert)
	win := addHyperVMachine(ctx, t, mgmt, conns["hv2"], cluster, "c1-windows-a1", testWindowsDisk, infrav1.OSWindows, false,
		windowsUserData(t, endpoint, "abcdef.0123456789abcdef", pin))
	eventually(t, step, func() error {
		if g := s.guests[hypervKey("hv2", win.id)]; g == nil || !g.booted {
			return fmt.Errorf("Windows guest not booted")
		}
		return nil
	})
	if r := kvpReport(ctx, t, conns["hv2"], win); r.State != simguest.StateSucceeded || r.Step != "finish" {
		t.Errorf("Windows bootstrap report in KVP: %+v", r)
	}
	wnode, err := wl.CoreV1().Nodes().Get(ctx, "win-c1a1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Windows Node: %v", err)
	}
	if got := wnode.Labels[corev1.LabelWindowsBuild]; got != "10.0.20348" {
		t.Errorf("windows-build label %q: want the parent disk's build", got)
	}
	if !hasTaint(wnode, "os", "windows", corev1.TaintEffectNoSchedule) {
		t.Errorf("taints %v", wnode.Spec.Taints)
	}
	// Its logs, as the provider collects them through PowerShell Direct.
	logs := guestLogs(ctx, t, conns["hv2"], win)
	for name, want := range map[string]string{
		"files/C/var/log/capwin/bootstrap.log": "[finish] Succeeded",
		"files/C/var/log/kubelet/kubelet.log":  `"Successfully registered node" node="win-c1a1"`,
		"state/hnsdiag.txt":                    "Overlay",
		"collect.log":                          "collecting on WIN-C1A1",
		"files/C/Program Files/Cloudbase Solutions/Cloudbase-Init/log/cloudbase-init.log": "Executing user data script",
	} {
		if !strings.Contains(logs[name], want) {
			t.Errorf("guest logs of the joined node: %s = %q, want %q", name, logs[name], want)
		}
	}

	// Cluster API's remediation spec marks a Node unhealthy with a status patch. The in-memory
	// API server has no status subresource; a patch of the object carries the status (the kind
	// suite's remediation spec writes status that way: md_remediation_test.go).
	wlc, err := client.New(&rest.Config{Host: "https://" + endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: caCert}}, client.Options{Scheme: mgmt.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	before := wnode.DeepCopy()
	wnode.Status.Conditions = append(wnode.Status.Conditions, corev1.NodeCondition{Type: "e2e.remediation.condition", Status: corev1.ConditionFalse})
	if err := wlc.Status().Patch(ctx, wnode, client.MergeFrom(before)); err == nil {
		t.Error("a status patch succeeded: the in-memory API server serves the status subresource now; md_remediation_test.go's proxy can go")
	}
	if err := wlc.Patch(ctx, wnode, client.MergeFrom(before)); err != nil {
		t.Fatalf("patch of the Node with a status condition: %v", err)
	}
	if n, err := wl.CoreV1().Nodes().Get(ctx, "win-c1a1", metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if len(n.Status.Conditions) != len(before.Status.Conditions)+1 {
		t.Errorf("the Node's conditions after the patch: %v", n.Status.Conditions)
	}

	// A Windows machine on the Linux parent disk fails its preflight, and says why.
	bad := addHyperVMachine(ctx, t, mgmt, conns["hv1"], cluster, "c1-windows-b2", testLinuxDisk, infrav1.OSWindows, false,
		windowsUserData(t, endpoint, "abcdef.0123456789abcdef", pin))
	eventually(t, step, func() error {
		if g := s.guests[hypervKey("hv1", bad.id)]; g == nil || !g.booted {
			return fmt.Errorf("guest not done")
		}
		return nil
	})
	if r := kvpReport(ctx, t, conns["hv1"], bad); r.State != simguest.StateFailed || r.Step != "preflight" || !strings.Contains(r.Message, "--hyperv-disk") {
		t.Errorf("report of the Windows guest on a Linux disk: %+v", r)
	}
	if got := guestLogs(ctx, t, conns["hv1"], bad)["files/C/var/log/capwin/bootstrap.log"]; !strings.Contains(got, "[preflight] Failed") {
		t.Errorf("bootstrap log of the Windows guest on a Linux disk: %q", got)
	}

	// A Windows machine on a broken image: cloudbase-init does not run the user data; no report,
	// no Node, only the guest's own logs say why.
	broken := addHyperVMachine(ctx, t, mgmt, conns["hv1"], cluster, "c1-windows-c3", testWindowsDisk, infrav1.OSWindows, false,
		windowsUserData(t, endpoint, "abcdef.0123456789abcdef", pin))
	breakImage(ctx, t, mgmt, cluster.Namespace, "c1-windows-c3")
	eventually(t, step, func() error {
		if g := s.guests[hypervKey("hv1", broken.id)]; g == nil || !g.booted {
			return fmt.Errorf("guest not done")
		}
		return nil
	})
	if raw := findVM(ctx, t, conns["hv1"], broken).KVP[wire.StatusKVPValue]; raw != "" {
		t.Errorf("the broken image's guest reported %q", raw)
	}
	logs = guestLogs(ctx, t, conns["hv1"], broken)
	if got := logs["files/C/Program Files/Cloudbase Solutions/Cloudbase-Init/log/cloudbase-init.log"]; !strings.Contains(got, "Executing user data failed") {
		t.Errorf("cloudbase-init log of the broken image: %q", got)
	}
	if !strings.Contains(logs["events/Application.json"], "cloudbase-init") || !strings.Contains(logs["collect.log"], `no file C:\var\lib\capwin\steps.done`) {
		t.Errorf("guest logs of the broken image: %v", logs)
	}

	// Removing the Windows VM deletes its Node; turning the control plane VM off stops its API
	// server, and so the endpoint.
	if err := conns["hv2"].Run(ctx, wire.OpRemove, wire.VMKey{Placement: hvFolders, ID: win.id, UID: win.uid}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, step, func() error {
		if _, err := wl.CoreV1().Nodes().Get(ctx, "win-c1a1", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("the Node of the removed VM is still there")
		}
		return nil
	})
	power(ctx, t, conns["hv1"], cp.id, wire.PowerOff)
	eventually(t, step, func() error {
		if _, err := wl.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
			return fmt.Errorf("the endpoint still answers without a running control plane")
		}
		return nil
	})

	// The Cluster goes: its workload cluster and guests go with it.
	if err := mgmt.Delete(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	step()
	if len(s.workloads) != 0 || len(s.guests) != 0 {
		t.Errorf("left: workload clusters %v, guests %d", s.workloads, len(s.guests))
	}
}

var hvFolders = wire.Placement{VMPath: `C:\ProgramData\capwin\vms`, DiskPath: `C:\ProgramData\capwin\disks`}

// hvMachine is a HyperVMachine's VM as the test created it.
type hvMachine struct {
	id, uid string
}

// addHyperVMachine is what Cluster API and capwin's provider would leave: a Machine, its
// HyperVMachine, and a VM created over WinRM with a cidata config drive (meta-data with the
// computer name, the user data) and started.
func addHyperVMachine(ctx context.Context, t *testing.T, mgmt client.Client, conn *hyperv.Conn, cluster *clusterv1.Cluster,
	name, parentDisk string, osType infrav1.OperatingSystem, controlPlane bool, data []byte) hvMachine {
	t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	uid := fmt.Sprintf("00000000-0000-4000-9000-%012d", len(name)*1000+int(name[len(name)-1]))
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: labels},
		Spec:       clusterv1.MachineSpec{ClusterName: cluster.Name, Version: "v1.36.3"},
	}
	im := &infrav1.HyperVMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, UID: apitypes.UID(uid), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: apitypes.UID("m-" + uid)}}},
		Spec: infrav1.HyperVMachineSpec{ParentDisk: parentDisk, OS: osType, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}},
	}
	for _, o := range []client.Object{m, im} {
		if err := mgmt.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	computerName := name
	if osType == infrav1.OSWindows {
		computerName = "WIN-C1" + name[len(name)-2:] // a NetBIOS computer name, as capwin gives Windows guests
	}
	mac := hyperv.MAC(uid, 0)
	meta, network, err := guestmeta.BuildNoCloud(uid, computerName, []guestmeta.NIC{{MAC: mac, DHCP4: true}}, osType == infrav1.OSLinux)
	if err != nil {
		t.Fatal(err)
	}
	iso, err := wire.ConfigDrive(map[string][]byte{"meta-data": meta, "network-config": network, "user-data": data})
	if err != nil {
		t.Fatal(err)
	}
	in := wire.CreateInput{VMKey: wire.VMKey{Placement: hvFolders, UID: uid}, Name: name, ParentDisk: parentDisk,
		Processors: 2, MemoryBytes: 4 << 30, SecureBoot: wire.SecureBoot{Enabled: true, Template: "MicrosoftWindows"},
		NICs:        []wire.NICInput{{Switch: "capwin-e2e", MAC: strings.ToUpper(strings.ReplaceAll(mac, ":", ""))}},
		ConfigDrive: base64.StdEncoding.EncodeToString(iso), Settings: hyperv.DefaultVMSettings()}
	var v wire.View
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		t.Fatal(err)
	}
	power(ctx, t, conn, v.ID, wire.PowerStart)
	return hvMachine{id: v.ID, uid: uid}
}

// power runs a power action and waits for its host job.
func power(ctx context.Context, t *testing.T, conn *hyperv.Conn, id, action string) {
	t.Helper()
	var job wire.JobRef
	if err := conn.Run(ctx, wire.OpPower, wire.PowerInput{ID: id, Action: action}, &job); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); job.Job != ""; time.Sleep(50 * time.Millisecond) {
		var st wire.JobState
		if err := conn.Run(ctx, wire.OpJob, job, &st); err != nil {
			t.Fatal(err)
		}
		if st.State == "succeeded" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("power %s of %s: job %+v", action, id, st)
		}
	}
}

func findVM(ctx context.Context, t *testing.T, conn *hyperv.Conn, m hvMachine) *wire.View {
	t.Helper()
	var found wire.Found
	if err := conn.Run(ctx, wire.OpFind, wire.VMKey{Placement: hvFolders, ID: m.id, UID: m.uid}, &found); err != nil || !found.Found {
		t.Fatalf("find VM %s: %v (found %v)", m.id, err, found.Found)
	}
	return found.VM
}

// kvpReport reads the guest's bootstrap report as the provider does: the KVP item of the VM's
// view, parsed by the provider's parser.
func kvpReport(ctx context.Context, t *testing.T, conn *hyperv.Conn, m hvMachine) infrav1.BootstrapStatus {
	t.Helper()
	raw := findVM(ctx, t, conn, m).KVP[wire.StatusKVPValue]
	r, err := guestos.ParseReport(raw)
	if err != nil {
		t.Fatalf("report of %s: %v (%q)", m.id, err, raw)
	}
	return r
}

// testCertificate writes a self-signed WinRM certificate for 127.0.0.1 and names, and returns
// its files and PEM (the caBundle that pins it).
func testCertificate(t *testing.T, names ...string) (certFile, keyFile string, certPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hypervsim"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		DNSNames: names, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, certPEM
}

// TestReadCidata reads capwin's config drive by its Joliet names and refuses drives Windows
// would not read: another volume label, no Joliet volume.
func TestReadCidata(t *testing.T) {
	want := map[string][]byte{"meta-data": []byte("instance-id: u1\nlocal-hostname: WIN-1\n"), "user-data": []byte("#ps1_sysnative\n")}
	iso, err := wire.ConfigDrive(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readCidata(iso)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || string(got["user-data"]) != string(want["user-data"]) || string(got["meta-data"]) != string(want["meta-data"]) {
		t.Fatalf("files %q", got)
	}
	joliet := -1
	for s := 16; (s+1)*isoSector <= len(iso) && iso[s*isoSector] != 255; s++ {
		if iso[s*isoSector] == 2 {
			joliet = s * isoSector
		}
	}
	if joliet < 0 {
		t.Fatal("no supplementary volume descriptor")
	}
	relabelled := append([]byte(nil), iso...)
	copy(relabelled[joliet+40:joliet+52], []byte{0, 'c', 0, 'o', 0, 'n', 0, 'f', 0, 'i', 0, 'g'})
	if _, err := readCidata(relabelled); err == nil || !strings.Contains(err.Error(), "not cidata") {
		t.Errorf("a drive labelled otherwise: %v", err)
	}
	noJoliet := append([]byte(nil), iso...)
	noJoliet[joliet+88] = 0 // no UCS-2 escape sequence: a plain supplementary descriptor
	if _, err := readCidata(noJoliet); err == nil || !strings.Contains(err.Error(), "no Joliet") {
		t.Errorf("a drive without Joliet names: %v", err)
	}
}

// TestHyperVConfig checks the Hyper-V hosts of the e2e config against ../../data/simulators.yaml
// with the config's variables substituted, as the suite applies it: the simulator's arguments
// parse into the hosts of HYPERV_HOSTS, every host trusts the simulator's WinRM certificate
// (hyperv-tls) for its address through its caBundle, and has its own port on the Service hyperv.
func TestHyperVConfig(t *testing.T) {
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
	raw, err := os.ReadFile("../../data/simulators.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := yamlprocessor.NewSimpleProcessor().Process(raw, func(name string) (string, error) {
		v, ok := cfg.Variables[name]
		if !ok {
			return "", fmt.Errorf("variable %s is not in the e2e config", name)
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		tlsSecret corev1.Secret
		svc       corev1.Service
		sim       appsv1.Deployment
	)
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		var meta metav1.PartialObjectMetadata
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("simulators.yaml with the e2e config's variables: %v\n%s", err, doc)
		}
		switch {
		case meta.Kind == "Secret" && meta.Name == "hyperv-tls":
			err = yaml.Unmarshal([]byte(doc), &tlsSecret)
		case meta.Kind == "Service" && meta.Name == "hyperv":
			err = yaml.Unmarshal([]byte(doc), &svc)
		case meta.Kind == "Deployment" && meta.Name == "capwin-e2e-sim":
			err = yaml.Unmarshal([]byte(doc), &sim)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(sim.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("no simulator Deployment in simulators.yaml")
	}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	o := newOptions(fs)
	if err := fs.Parse(sim.Spec.Template.Spec.Containers[0].Args); err != nil {
		t.Fatalf("the simulator's arguments: %v", err)
	}
	if err := o.validate(); err != nil {
		t.Fatalf("the simulator's arguments: %v", err)
	}
	if o.hypervHosts != cfg.Variables["HYPERV_HOSTS"] || o.hypervDisks[cfg.Variables["HYPERV_WINDOWS_PARENT_DISK"]] != cfg.Variables["HYPERV_WINDOWS_PARENT_DISK_BUILD"] ||
		o.hypervDisks[cfg.Variables["HYPERV_LINUX_PARENT_DISK"]] != hypervLinuxDisk {
		t.Errorf("the simulator's Hyper-V arguments are not the e2e config's: hosts %q, disks %v", o.hypervHosts, o.hypervDisks)
	}
	cert, err := tls.X509KeyPair([]byte(tlsSecret.StringData[corev1.TLSCertKey]), []byte(tlsSecret.StringData[corev1.TLSPrivateKeyKey]))
	if err != nil {
		t.Fatalf("hyperv-tls in simulators.yaml: %v", err)
	}
	hosts, err := parseHyperVHosts(o.hypervHosts)
	if err != nil {
		t.Fatal(err)
	}
	ports := map[int32]bool{}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.IntValue() == int(p.Port) {
			ports[p.Port] = true
		}
	}
	for _, h := range hosts {
		if len(h.CABundle) == 0 || h.InsecureSkipTLSVerify {
			t.Errorf("host %s: the e2e pins the certificate with caBundle", h.Name)
		}
		if err := verifyHostCertificate(h, cert); err != nil {
			t.Errorf("host %s: %v", h.Name, err)
		}
		if want := svc.Name + "." + svc.Namespace + ".svc.cluster.local"; h.Address != want {
			t.Errorf("host %s: address %s, the Service is %s", h.Name, h.Address, want)
		}
		if !ports[h.Port] {
			t.Errorf("host %s: port %d is not a port (with the same target port) of Service hyperv", h.Name, h.Port)
		}
		if h.CredentialsRef.Name == "" {
			t.Errorf("host %s has no credentialsRef", h.Name)
		}
	}
}

// TestDisksAsPaths: a found VM's disks come out as v0.1's library wrote them, paths only; the rest
// of the result is left as it is.
func TestDisksAsPaths(t *testing.T) {
	in := wire.Found{Found: true, VM: &wire.View{ID: "vm1", Disks: []wire.DiskView{
		{Path: `C:\vms\vm1\os.vhdx`, Controller: "SCSI", Location: 0}, {Path: `C:\vms\vm1\data.vhdx`, Controller: "SCSI", Location: 1}}}}
	out, err := disksAsPaths(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	var old struct {
		Found bool `json:"found"`
		VM    struct {
			ID    string   `json:"id"`
			Disks []string `json:"disks"`
		} `json:"vm"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatalf("v0.1's shape: %v (%s)", err, b)
	}
	if !old.Found || old.VM.ID != "vm1" || len(old.VM.Disks) != 2 || old.VM.Disks[1] != `C:\vms\vm1\data.vhdx` {
		t.Fatalf("%+v", old)
	}
}

// TestV01Settings: a create from v0.1's scripts, whose input has no settings, gets the ones its
// create.ps1 hard-coded; this tree's input and other operations pass as they are.
func TestV01Settings(t *testing.T) {
	in, _ := json.Marshal(map[string]any{"uid": "u1", "name": "vm1"})
	out, err := v01Settings(wire.OpCreate.Name, in)
	if err != nil {
		t.Fatal(err)
	}
	var got wire.CreateInput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Settings.AutomaticStopAction != "TurnOff" || got.Settings.AutomaticCheckpoints || got.UID != "u1" {
		t.Fatalf("%+v", got)
	}
	current, _ := json.Marshal(wire.CreateInput{Settings: wire.VMSettings{AutomaticStopAction: "Save"}})
	out, _ = v01Settings(wire.OpCreate.Name, current)
	if err := json.Unmarshal(out, &got); err != nil || got.Settings.AutomaticStopAction != "Save" {
		t.Fatalf("this tree's settings were replaced: %s", out)
	}
	if out, _ := v01Settings(wire.OpPower.Name, in); string(out) != string(in) {
		t.Fatalf("power input changed: %s", out)
	}
}
