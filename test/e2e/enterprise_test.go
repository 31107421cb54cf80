package e2e_test

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	infraguest "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/internal/test/adsim"
	"github.com/capwin/capwin/test/framework/harness"
)

// The enterprise workers join the harness's Active Directory domain and use the company
// registry: a mirror of registry.k8s.io (where the pause image comes from) with the company's CA
// and pull credentials. containerd keeps its data on a data disk of the VM, and the company
// network has a route, an MTU and a DNS search domain.
const (
	mirrorURL    = "https://mirror.corp.example"
	pullUser     = "svc-k8s-pull"
	pullPassword = "pull-p4ss" //nolint:gosec // G101: a test credential that must reach the node's containerd
)

// The harness domain's group allowed to retrieve a gMSA's password, and the account the bootstrap
// manager uses to delete computer accounts in the OU and write that group's members.
const (
	gmsaHosts       = "CN=WebApp01 hosts,OU=Servers,DC=corp,DC=example,DC=com"
	cleanupUser     = "svc-k8s-cleanup"
	cleanupPassword = "Cl3anup-p4ss" //nolint:gosec // G101: a test credential of the simulated domain
)

// enterpriseWorkers stores the CA ConfigMap and the registry, domain join and directory
// credentials Secrets in the workload's namespace and returns the bootstrap settings that use
// them, and the domain's directory (LDAPS, private CA), which it starts: the bootstrap manager
// puts each node's computer account in the gMSA hosts group and deletes it with the Machine.
func enterpriseWorkers(t *testing.T, h *harness.Harness) (func(*bootstrapv1.WindowsConfigSpec), *adsim.Directory) {
	g := NewWithT(t)
	dir, err := h.Guests.Domain.Serve()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(dir.Stop)
	dir.AddGroup(gmsaHosts)
	dir.AddUser(adsim.User{Name: cleanupUser, Password: cleanupPassword, DeleteOUs: []string{harness.DomainOU}, WriteMembers: []string{gmsaHosts}})
	ca, err := os.ReadFile("../../bootstrap/pkg/userdata/testdata/registry-ca.pem")
	g.Expect(err).NotTo(HaveOccurred())
	c := h.Management.Client
	g.Expect(c.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "corp-ca", Namespace: harness.Namespace},
		Data: map[string]string{"ca.pem": string(ca)}})).To(Succeed())
	g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "corp-pull", Namespace: harness.Namespace},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte(pullUser), "password": []byte(pullPassword)}})).To(Succeed())
	g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "domain-join", Namespace: harness.Namespace},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte(harness.DomainJoinUser), "password": []byte(h.Guests.Domain.Password)}})).To(Succeed())
	g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ad-cleanup", Namespace: harness.Namespace},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte(cleanupUser + "@" + harness.DomainName), "password": []byte(cleanupPassword)}})).To(Succeed())
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: harness.DomainName, OrganizationalUnit: harness.DomainOU,
			DNSServers: []string{harness.DomainDNS}, Credentials: &bootstrapv1.SecretName{Name: "domain-join"},
			Groups:           []string{gmsaHosts},
			ComputerAccounts: &bootstrapv1.ComputerAccounts{DeletePolicy: bootstrapv1.ComputerAccountDelete},
			Directory: &bootstrapv1.Directory{URL: dir.URL, Credentials: bootstrapv1.SecretName{Name: "ad-cleanup"},
				CA: &bootstrapv1.CABundle{Content: string(dir.CA)}}}
		containerdOnDataDisk(1, 0)(s)
		s.Containerd.Registries = []bootstrapv1.Registry{{Host: "registry.k8s.io", Mirrors: []bootstrapv1.RegistryMirror{{
			URL: mirrorURL,
			RegistryAccess: bootstrapv1.RegistryAccess{
				CA:          &bootstrapv1.CABundle{ConfigMap: &bootstrapv1.ConfigMapKey{Name: "corp-ca", Key: "ca.pem"}},
				Credentials: &bootstrapv1.SecretName{Name: "corp-pull"},
			},
		}}}}
	}, dir
}

// enterpriseMachines gives the VMs a data disk for containerd (unit 1 of the template's SCSI
// controller: target 1, LUN 0 in Windows), the company network's route, MTU and search domain,
// a Soft anti-affinity rule (the flavors' default) and the company's vSphere tags.
func enterpriseMachines(o client.Object) {
	s := &o.(*infrav1.VCenterMachineTemplate).Spec.Template.Spec
	s.DataDisks = []infrav1.VCenterDataDisk{{Name: "containerd", SizeGiB: 20}}
	s.AntiAffinity, s.Tags = &infrav1.VCenterAntiAffinity{Mode: infrav1.AntiAffinitySoft}, harness.VSphereTags
	nic := &s.Network[0]
	nic.Routes = []infrav1.NetworkRoute{{To: corpNetwork, Via: corpRouter, Metric: ptr.To[int32](50)}}
	nic.MTU, nic.SearchDomains = ptr.To[int32](1400), []string{harness.DomainName}
}

const (
	corpNetwork = "10.50.0.0/16"
	corpRouter  = "10.1.0.254"
)

// checkEnterpriseNode: the node joined the domain (its computer account is in the OU, in the gMSA
// hosts group, found by the bootstrap manager, and the node waited for the group); its
// containerd (containerd's own resolver on the files the bootstrap wrote) pulls the pause image
// from the mirror first, trusting the company CA and sending the pull credentials, and from
// registry.k8s.io after it, and keeps its data on the VM's data disk, which the VCenterMachine
// reports at the SCSI address the bootstrap found it at; the cloudbase-init guest applied the route,
// MTU and search domain (the bootstrap's network step); the VM carries the company's tags.
func checkEnterpriseNode(g Gomega, h *harness.Harness, dir *adsim.Directory, m clusterv1.Machine) {
	node := m.Status.NodeRef.Name
	guest := h.Guests.ByNode(node)
	g.Expect(guest).NotTo(BeNil(), "guest of node %s", node)
	pull := guest.SandboxPull()
	g.Expect(pull.Image).To(Equal("registry.k8s.io/pause:3.10"))
	g.Expect(pull.Endpoints).To(HaveLen(2))
	g.Expect(pull.Endpoints[0].URL).To(Equal(mirrorURL + "/v2"))
	g.Expect(pull.Endpoints[0].RootCAs).NotTo(BeNil(), "the mirror's CA")
	g.Expect(pull.Endpoints[0].Credentials).To(Equal(pullUser + ":" + pullPassword))
	g.Expect(pull.Endpoints[1].URL).To(Equal("https://registry.k8s.io/v2"))
	g.Expect(h.Guests.Domain.Accounts()).To(HaveKeyWithValue(strings.ToUpper(node), harness.DomainOU), "computer account of %s", node)
	acct := dir.Computer(node)
	g.Expect(acct).NotTo(BeNil(), "computer account of %s in the directory", node)
	g.Expect(acct.Attrs["memberof"]).To(Equal([]string{gmsaHosts}))
	cfg := &bootstrapv1.WindowsConfig{}
	g.Expect(h.Management.Client.Get(context.Background(), client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.Bootstrap.ConfigRef.Name}, cfg)).To(Succeed())
	g.Expect(cfg.Status.ActiveDirectory).NotTo(BeNil())
	g.Expect(cfg.Status.ActiveDirectory.DistinguishedName).To(Equal(acct.DN))
	g.Expect(ptr.Deref(cfg.Status.ActiveDirectory.CreatedByJoin, false)).To(BeTrue())
	bootLog, _ := guest.File(userdata.LogFile)
	g.Expect(string(bootLog)).To(ContainSubstring("[domainGroups] member of " + gmsaHosts + "; the computer's Kerberos tickets were purged"))

	checkDataDisk(g, h, m, infrav1.DataDiskStatus{Name: "containerd", Target: 1, LUN: 0})
	vm := &infrav1.VCenterMachine{}
	g.Expect(h.Management.Client.Get(context.Background(), client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, vm)).To(Succeed())
	g.Expect(vm.Status.Tags).To(HaveLen(len(harness.VSphereTags)), "machine %s: status.tags", m.Name)
	for i, tag := range harness.VSphereTags {
		g.Expect(vm.Status.Tags[i]).To(And(HaveField("Category", tag.Category), HaveField("Name", tag.Name), HaveField("ID", Not(BeEmpty()))))
	}

	net := guest.Network()
	g.Expect(net.SuffixSearchList).To(Equal([]string{harness.DomainName}))
	g.Expect(net.Adapters).To(HaveLen(1))
	g.Expect(net.Adapters[0].MTU4).To(BeEquivalentTo(1400))
	g.Expect(net.Adapters[0].Routes).To(ContainElement(infraguest.LaunchRoute{To: corpNetwork, Via: corpRouter, Metric: 50}))
}

// containerdOnDataDisk prepares the data disk at a SCSI address as E: (NTFS, label containerd)
// and puts containerd's root and state on it.
func containerdOnDataDisk(target, lun int32) func(*bootstrapv1.WindowsConfigSpec) {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.Disks = []bootstrapv1.Disk{{Location: bootstrapv1.DiskLocation{Target: target, LUN: lun}, Label: "containerd", DriveLetter: "E"}}
		s.Containerd.Root, s.Containerd.State = `E:\containerd\root`, `E:\containerd\state`
	}
}

// checkDataDisks runs checkDataDisk on every Machine of the MachineDeployment.
func checkDataDisks(g Gomega, h *harness.Harness, workers string, want infrav1.DataDiskStatus) {
	list := &clusterv1.MachineList{}
	g.Expect(h.Management.Client.List(context.Background(), list, client.InNamespace(harness.Namespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: workers})).To(Succeed())
	g.Expect(list.Items).NotTo(BeEmpty())
	for _, m := range list.Items {
		checkDataDisk(g, h, m, want)
	}
}

// checkDataDisk: the Machine's VCenterMachine or HyperVMachine reports its VM's one data disk at
// the SCSI address where its guest found the disk and mounted it as E:.
func checkDataDisk(g Gomega, h *harness.Harness, m clusterv1.Machine, want infrav1.DataDiskStatus) {
	key := client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}
	var status *infrav1.MachineStatus
	if m.Spec.InfrastructureRef.Kind == "HyperVMachine" {
		vm := &infrav1.HyperVMachine{}
		g.Expect(h.Management.Client.Get(context.Background(), key, vm)).To(Succeed())
		status = &vm.Status
	} else {
		vm := &infrav1.VCenterMachine{}
		g.Expect(h.Management.Client.Get(context.Background(), key, vm)).To(Succeed())
		status = &vm.Status
	}
	g.Expect(status.DataDisks).To(Equal([]infrav1.DataDiskStatus{want}), "machine %s", m.Name)
	guest := h.Guests.ByNode(m.Status.NodeRef.Name)
	g.Expect(guest).NotTo(BeNil(), "guest of machine %s", m.Name)
	g.Expect(guest.Disks()).To(ConsistOf(And(HaveField("Target", want.Target), HaveField("LUN", want.LUN), HaveField("DriveLetter", "E"))),
		"machine %s: the data disk, mounted as E:", m.Name)
}

// kubelet is spec.kubeletConfiguration from a JSON object of KubeletConfiguration fields.
func kubelet(fields string) *runtime.RawExtension {
	return &runtime.RawExtension{Raw: []byte(fields)}
}
