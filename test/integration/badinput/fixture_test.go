package badinput_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/badinput"
)

// row is one webhook rule broken: mutate breaks a valid spec; field is the bad field's path
// below the spec (e.g. "network[0].gateway4").
type row[S any] struct {
	name   string
	mutate func(*S)
	field  string
}

// fixture is one workload cluster: its Cluster (infrastructure provisioned, as CAPI reports it
// once the infrastructure cluster was ready) and its infrastructure cluster object.
type fixture struct {
	ns      string
	cluster *clusterv1.Cluster
}

// labels put an object in the cluster and under the suite's manager.
func labels() map[string]string {
	return map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.WatchLabel: watchFilter}
}

// newFixture creates a namespace with the login Secret, a Cluster "win" pointing at infra (which
// it creates as owned by the Cluster) and its kubeconfig. provisioned marks the Cluster's
// infrastructure provisioned: a cluster object that turned invalid after it was provisioned.
func newFixture(t *testing.T, infra client.Object, provisioned bool) *fixture {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bad-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	f := &fixture{ns: ns.Name}
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "login", Namespace: f.ns},
		Data:       map[string][]byte{"username": []byte(hostUser), "password": []byte(hostPassword)},
	})).To(Succeed())
	kind := "VCenterCluster"
	if _, ok := infra.(*infrav1.HyperVCluster); ok {
		kind = "HyperVCluster"
	}
	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: watchFilter}},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: "win"},
		},
	}
	g.Expect(k8s.Create(ctx, f.cluster)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "win-kubeconfig", Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Type:       clusterv1.ClusterSecretType, Data: map[string][]byte{"value": env.KubeConfig},
	})).To(Succeed())
	infra.SetName("win")
	infra.SetNamespace(f.ns)
	infra.SetLabels(labels())
	infra.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "win", UID: f.cluster.UID}})
	g.Expect(k8s.Create(ctx, infra)).To(Succeed(), "the schema admits it")
	if provisioned {
		f.provisioned(t)
	}
	return f
}

// provisioned marks the Cluster's infrastructure provisioned (CAPI's cluster controller's job).
func (f *fixture) provisioned(t *testing.T) {
	t.Helper()
	f.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	NewWithT(t).Expect(k8s.Status().Update(ctx, f.cluster)).To(Succeed())
}

// addMachine creates a Machine named like infra with its bootstrap Secret, and infra owned by it.
func (f *fixture) addMachine(t *testing.T, name string, infra client.Object) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: f.ns, Labels: labels()},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": []byte("#ps1_sysnative\r\nexit 0"), "format": []byte("cloud-config")},
	})).To(Succeed())
	kind := "VCenterMachine"
	if _, ok := infra.(*infrav1.HyperVMachine); ok {
		kind = "HyperVMachine"
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels()},
		Spec: clusterv1.MachineSpec{ClusterName: "win", Version: "v1.36.3",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: name}},
	}
	g.Expect(k8s.Create(ctx, m)).To(Succeed())
	infra.SetName(name)
	infra.SetNamespace(f.ns)
	infra.SetLabels(labels())
	infra.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}})
	g.Expect(k8s.Create(ctx, infra)).To(Succeed(), "the schema admits it")
}

// expectRefused is badinput.ExpectRefused on the suite's client.
func expectRefused(t *testing.T, obj badinput.Object, condition, path string) {
	t.Helper()
	badinput.ExpectRefused(t, k8s, obj, condition, path)
}

// vcenterVMs counts vcsim's VMs whose instance UUID is uid (capwin's create sets it).
func vcenterVMs(uid string) int {
	n := 0
	for _, e := range model.Map().All("VirtualMachine") {
		if vm, ok := e.(*simulator.VirtualMachine); ok && vm.Config != nil && strings.EqualFold(vm.Config.InstanceUuid, uid) {
			n++
		}
	}
	return n
}

// hypervVMs counts the simulated host's VMs of the object uid (capwin writes it in the notes).
func hypervVMs(uid string) int {
	n := 0
	for _, vm := range host.VMs() {
		if strings.Contains(vm.Notes, "capwin-uid:"+uid) {
			n++
		}
	}
	return n
}

// validVCenterCluster is vcsim's datacenter with the namespace's login.
func validVCenterCluster() infrav1.VCenterClusterSpec {
	return infrav1.VCenterClusterSpec{
		Server: "https://" + vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(vcsim.Certificate()),
		IdentityRef: infrav1.VCenterIdentityReference{Name: "login"}, Datacenter: "DC0",
	}
}

// validHyperVCluster is the simulated host with the namespace's login.
func validHyperVCluster() infrav1.HyperVClusterSpec {
	return infrav1.HyperVClusterSpec{VirtualSwitch: vswitch, Hosts: []infrav1.HyperVHost{{
		Name: host.Name, Address: wsSrv.Host, Port: int32(wsSrv.Port), //nolint:gosec // G115: a TCP port, below 2^16
		CredentialsRef: infrav1.SecretReference{Name: "login"}, CABundle: wsSrv.CACertPEM(),
	}}}
}
