package hyperv_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// fixture is one workload cluster on the simulated hosts.
type fixture struct {
	ns      string
	filter  string // the watch filter label of its objects: the manager that reconciles them
	format  string // bootstrap format; "" is cloud-config
	cluster *clusterv1.Cluster
	hc      *infrav1.HyperVCluster
}

// newCluster creates a namespace, the hosts' credentials Secret, a HyperVCluster over the given
// hosts (all when none), its Cluster and kubeconfig, and waits until the HyperVCluster is
// provisioned; the test then plays CAPI's cluster controller.
func newCluster(t *testing.T, mutate func(*infrav1.HyperVClusterSpec)) *fixture {
	t.Helper()
	return newClusterOn(t, watchFilter, hosts, mutate)
}

// newClusterOn is newCluster over the hosts hs, for the manager of the watch filter label filter.
func newClusterOn(t *testing.T, filter string, hs []simHost, mutate func(*infrav1.HyperVClusterSpec)) *fixture {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hv-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	f := &fixture{ns: ns.Name, filter: filter}
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hosts", Namespace: f.ns},
		Data:       map[string][]byte{"username": []byte(hostUser), "password": []byte(hostPassword)},
	})).To(Succeed())
	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: filter}},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "HyperVCluster", Name: "win"},
		},
	}
	g.Expect(k8s.Create(ctx, f.cluster)).To(Succeed())
	envtest.PauseWhenDone(t, k8s, f.cluster)
	spec := infrav1.HyperVClusterSpec{VirtualSwitch: vswitch}
	for _, h := range hs {
		spec.Hosts = append(spec.Hosts, infrav1.HyperVHost{Name: h.Name, Address: h.srv.Host, Port: int32(h.srv.Port), //nolint:gosec // G115: a TCP port, below 2^16
			CredentialsRef: infrav1.SecretReference{Name: "hosts"}, CABundle: h.srv.CACertPEM()})
	}
	if mutate != nil {
		mutate(&spec)
	}
	f.hc = &infrav1.HyperVCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: f.ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.WatchLabel: filter},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "win", UID: f.cluster.UID}}},
		Spec: spec,
	}
	g.Expect(k8s.Create(ctx, f.hc)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "win-kubeconfig", Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Type:       clusterv1.ClusterSecretType, Data: map[string][]byte{"value": env.KubeConfig},
	})).To(Succeed())
	return f
}

// wrongSecret adds a Secret "wrong" with a password the hosts refuse.
func wrongSecret(t *testing.T, f *fixture) {
	t.Helper()
	f.addSecret(t, "wrong", "not-the-password")
}

// addSecret adds a login Secret of the hosts' user with password.
func (f *fixture) addSecret(t *testing.T, name, password string) {
	t.Helper()
	NewWithT(t).Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Data:       map[string][]byte{"username": []byte(hostUser), "password": []byte(password)},
	})).To(Succeed())
}

// provisioned waits for the HyperVCluster and marks the Cluster's infrastructure provisioned.
func (f *fixture) provisioned(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
		g.Expect(ptr.Deref(f.hc.Status.Initialization.Provisioned, false)).To(BeTrue(), "conditions %+v", f.hc.Status.Conditions)
	}, time.Minute, 50*time.Millisecond).Should(Succeed())
	f.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(k8s.Status().Update(ctx, f.cluster)).To(Succeed())
}

// machine is a Machine, its bootstrap Secret and its HyperVMachine.
type machine struct {
	f   *fixture
	m   *clusterv1.Machine
	hvm *infrav1.HyperVMachine
}

func defaultSpec() infrav1.HyperVMachineSpec {
	return infrav1.HyperVMachineSpec{ParentDisk: parentDisk, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}
}

func (f *fixture) addMachine(t *testing.T, name, deployment string, userData []byte, spec infrav1.HyperVMachineSpec) *machine {
	t.Helper()
	return f.addMachineIn(t, "", name, deployment, userData, spec)
}

// addMachineIn is addMachine with the Machine in a failure domain, as CAPI places it.
func (f *fixture) addMachineIn(t *testing.T, failureDomain, name, deployment string, userData []byte, spec infrav1.HyperVMachineSpec) *machine {
	t.Helper()
	g := NewWithT(t)
	labels := map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.WatchLabel: f.filter}
	if deployment != "" {
		labels[clusterv1.MachineDeploymentNameLabel] = deployment
	}
	format := f.format
	if format == "" {
		format = "cloud-config"
	}
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: f.ns, Labels: labels},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": userData, "format": []byte(format)},
	})).To(Succeed())
	mc := &machine{f: f}
	mc.m = &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels},
		Spec: clusterv1.MachineSpec{ClusterName: "win", Version: "v1.36.3", FailureDomain: failureDomain,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "HyperVMachine", Name: name}},
	}
	g.Expect(k8s.Create(ctx, mc.m)).To(Succeed())
	mc.hvm = &infrav1.HyperVMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: mc.m.UID}}},
		Spec: spec,
	}
	g.Expect(k8s.Create(ctx, mc.hvm)).To(Succeed())
	return mc
}

func (mc *machine) get(g Gomega) *infrav1.HyperVMachine {
	out := &infrav1.HyperVMachine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc.hvm), out)).To(Succeed())
	return out
}

// waitReason waits for a VMProvisioned reason, and the state that goes with it (CAPI's patch
// helper writes conditions and the rest of status in separate calls), and returns the machine.
func (mc *machine) waitReason(t *testing.T, reason string) *infrav1.HyperVMachine {
	t.Helper()
	var out *infrav1.HyperVMachine
	NewWithT(t).Eventually(func(g Gomega) {
		out = mc.get(g)
		g.Expect(condition(out.Status.Conditions, infrav1.VMProvisionedCondition).Reason).To(Equal(reason), "%+v", out.Status.Conditions)
		if state, ok := map[string]infrav1.ProvisioningState{
			infrav1.WaitingForAddressesReason: infrav1.StateWaitingForAddresses,
			infrav1.ProvisionedReason:         infrav1.StateProvisioned,
		}[reason]; ok {
			g.Expect(out.Status.Provisioning.State).To(Equal(state))
		}
	}, time.Minute, 50*time.Millisecond).Should(Succeed())
	return out
}

func condition(conds []metav1.Condition, t string) metav1.Condition {
	for _, c := range conds {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// host returns the simulated host of a name.
func host(name string) *hypervsim.Host {
	for _, h := range hosts {
		if h.Name == name {
			return h.Host
		}
	}
	return nil
}

// vmOf returns the simulated VM of a machine (by the UID in its notes).
func vmOf(h *hypervsim.Host, uid string) (hypervsim.VM, bool) {
	for _, vm := range h.VMs() {
		if strings.Contains(vm.Notes, "capwin-uid:"+uid) {
			return vm, true
		}
	}
	return hypervsim.VM{}, false
}

func randSuffix() string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

func readConfigDrive(iso []byte) (map[string][]byte, error) { return wire.ReadConfigDrive(iso) }
