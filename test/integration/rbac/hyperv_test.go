package rbac_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

const hostUser, hostPassword, parentDisk = "capwin", "Host-pw1", `C:\golden\win2022.vhdx`

// hypervBackend is testMachines on one simulated Hyper-V host (WinRM): a HyperVClusterIdentity,
// a HyperVCluster using it, a HyperVMachineTemplate and one HyperVMachine.
type hypervBackend struct {
	host *hypervsim.Host
	srv  *wsman.Server
}

func (b *hypervBackend) start(t *testing.T, _ *suite) {
	g := NewWithT(t)
	g.Expect(hypervsim.CheckScripts()).To(Succeed())
	b.host = hypervsim.NewHost("hv1", 131072, []string{"external"}, map[string]int64{parentDisk: 30 << 30})
	b.host.SetJobDelay(100 * time.Millisecond)
	var err error
	b.srv, err = b.host.Serve(map[string]string{hostUser: hostPassword})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(b.srv.Close)
}

// identity: the hosts' login is a HyperVClusterIdentity's: its Secret lives in the manager's
// namespace, and it selects the tenant namespace by label.
func (b *hypervBackend) identity(t *testing.T, s *suite, ns string) (client.Object, *infrav1.ClusterIdentityStatus) {
	NewWithT(t).Expect(s.admin.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hyperv-hosts", Namespace: identityNamespace},
		Data:       map[string][]byte{"username": []byte(hostUser), "password": []byte(hostPassword)},
	})).To(Succeed())
	id := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "hosts"}, Spec: infrav1.HyperVClusterIdentitySpec{
		ClusterIdentitySpec: infrav1.ClusterIdentitySpec{SecretName: "hyperv-hosts", AllowedNamespaces: infrav1.AllowedNamespaces{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}}},
		Hosts:   []infrav1.HyperVIdentityHosts{{Addresses: []string{b.srv.Host}, Port: int32(b.srv.Port), CABundle: b.srv.CACertPEM()}}, //nolint:gosec // G115: a TCP port, below 2^16
		Allowed: infrav1.HyperVAllowed{Switches: []string{"external"}, ParentDisks: []string{parentDisk}},
	}}
	return id, &id.Status
}

func (b *hypervBackend) cluster(ns string, owner metav1.OwnerReference) (conditioned, *infrav1.ClusterInitializationStatus) {
	hc := &infrav1.HyperVCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"},
			OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: infrav1.HyperVClusterSpec{VirtualSwitch: "external",
			CredentialsRef: infrav1.HyperVIdentityReference{Kind: infrav1.HyperVClusterIdentityKind, Name: "hosts"},
			Hosts:          []infrav1.HyperVHost{{Name: b.host.Name, Address: b.srv.Host, Port: int32(b.srv.Port), CABundle: b.srv.CACertPEM()}}}, //nolint:gosec // G115: a TCP port, below 2^16
	}
	return hc, &hc.Status.Initialization
}

func hypervSpec() infrav1.HyperVMachineSpec {
	return infrav1.HyperVMachineSpec{ParentDisk: parentDisk, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}
}

func (b *hypervBackend) template(ns string) (client.Object, *infrav1.MachineTemplateStatus) {
	tmpl := &infrav1.HyperVMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0", Namespace: ns},
		Spec:       infrav1.HyperVMachineTemplateSpec{Template: infrav1.HyperVMachineTemplateResource{Spec: hypervSpec()}},
	}
	return tmpl, &tmpl.Status
}

func (b *hypervBackend) published(g Gomega, status *infrav1.MachineTemplateStatus) {
	g.Expect(status.NodeInfo.OperatingSystem).To(Equal("windows"))
}

func (b *hypervBackend) machine(m *clusterv1.Machine) machineObject {
	return &infrav1.HyperVMachine{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels,
			OwnerReferences: []metav1.OwnerReference{ownedBy(m, "Machine")}},
		Spec: hypervSpec(),
	}
}

// boot: the guest boots and integration services report an address.
func (b *hypervBackend) boot(t *testing.T, id string) {
	NewWithT(t).Expect(b.host.Guest(id, func(v *hypervsim.VM) { v.Heartbeat, v.NICs[0].IPs = true, []string{"10.2.0.5"} })).To(Succeed())
}

// deleted: the host has no VM left.
func (b *hypervBackend) deleted(g Gomega) {
	g.Expect(b.host.VMs()).To(BeEmpty())
}
