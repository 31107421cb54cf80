package vcenter_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/envtest"
)

// templateVM is a VM of vcsim's VPX model used as the clone source.
const templateVM = "DC0_H0_VM0"

// fixture is one workload cluster on vcsim with one Machine and its VCenterMachine.
type fixture struct {
	ns     string
	filter string
	name   string // of the Cluster and VCenterCluster
	format string // bootstrap format; "" is cloud-config
	// machineLabels are added to the labels of the Machines addMachine creates.
	machineLabels map[string]string
	// failureDomain places the Machines addMachine creates ("": none).
	failureDomain string
	cluster       *clusterv1.Cluster
	vcCluster     *infrav1.VCenterCluster
	machine       *clusterv1.Machine
	vm            *infrav1.VCenterMachine
}

// newCluster creates the namespace, identity Secret, VCenterCluster, Cluster (infrastructure
// provisioned) and its kubeconfig Secret.
func newCluster(t *testing.T, filter string) *fixture {
	t.Helper()
	f := newNamespace(t, filter, nil)
	f.addIdentitySecret(t, f.ns, "vcenter-identity", vcsim.URL.User.Username())
	f.addCluster(t, "win", nil)
	return f
}

// newNamespace creates a namespace with the labels; the fixture has no cluster yet.
func newNamespace(t *testing.T, filter string, labels map[string]string) *fixture {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vc-", Labels: labels}}
	NewWithT(t).Expect(k8s.Create(ctx, ns)).To(Succeed())
	return &fixture{ns: ns.Name, filter: filter}
}

// addIdentitySecret creates a Secret with vcsim's login as user (capwin, or capwin+tag).
func (f *fixture) addIdentitySecret(t *testing.T, namespace, name, user string) {
	t.Helper()
	pw, _ := vcsim.URL.User.Password()
	NewWithT(t).Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       map[string][]byte{"username": []byte(user), "password": []byte(pw)},
	})).To(Succeed())
}

// addCluster creates the Cluster (infrastructure provisioned), its kubeconfig Secret and a
// VCenterCluster on vcsim with the identity Secret vcenter-identity, changed by mutate; the
// fixture's machines join it.
func (f *fixture) addCluster(t *testing.T, name string, mutate func(*infrav1.VCenterClusterSpec)) {
	t.Helper()
	g := NewWithT(t)
	f.name = name
	labels := map[string]string{clusterv1.ClusterNameLabel: name, clusterv1.WatchLabel: f.filter}
	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: f.filter}},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterCluster", Name: name},
		},
	}
	g.Expect(k8s.Create(ctx, f.cluster)).To(Succeed())
	envtest.PauseWhenDone(t, k8s, f.cluster)
	spec := infrav1.VCenterClusterSpec{
		Server: "https://" + vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(vcsim.Certificate()),
		IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-identity"}, Datacenter: "DC0",
	}
	if mutate != nil {
		mutate(&spec)
	}
	f.vcCluster = &infrav1.VCenterCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: f.cluster.UID}}},
		Spec: spec,
	}
	g.Expect(k8s.Create(ctx, f.vcCluster)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Type:       clusterv1.ClusterSecretType, Data: map[string][]byte{"value": env.KubeConfig},
	})).To(Succeed())
	f.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(k8s.Status().Update(ctx, f.cluster)).To(Succeed())
}

// defaultSpec is a DHCP Windows VM grown to 2 CPUs, 4 GiB and a 40 GiB disk.
func defaultSpec() infrav1.VCenterMachineSpec {
	return infrav1.VCenterMachineSpec{
		Template: templateVM, Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_H0/Resources"}, CloneMode: infrav1.FullClone, NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40,
		Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}},
		OS:      infrav1.OSWindows, PowerOffMode: infrav1.PowerOffHard,
	}
}

// addMachine creates the bootstrap Secret, the Machine and its VCenterMachine.
func (f *fixture) addMachine(t *testing.T, name string, userData []byte, spec infrav1.VCenterMachineSpec) {
	t.Helper()
	g := NewWithT(t)
	labels := map[string]string{clusterv1.ClusterNameLabel: f.name, clusterv1.WatchLabel: f.filter}
	format := f.format
	if format == "" {
		format = "cloud-config"
	}
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: f.ns, Labels: labels},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": userData, "format": []byte(format)},
	})).To(Succeed())
	machineLabels := maps.Clone(labels)
	maps.Copy(machineLabels, f.machineLabels)
	f.machine = &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: machineLabels},
		Spec: clusterv1.MachineSpec{
			ClusterName: f.name, Version: "v1.36.3", FailureDomain: f.failureDomain,
			Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterMachine", Name: name},
		},
	}
	g.Expect(k8s.Create(ctx, f.machine)).To(Succeed())
	f.vm = &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: f.machine.UID}}},
		Spec: spec,
	}
	g.Expect(k8s.Create(ctx, f.vm)).To(Succeed())
}

// get re-reads the VCenterMachine.
func (f *fixture) get(g Gomega) *infrav1.VCenterMachine {
	m := &infrav1.VCenterMachine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), m)).To(Succeed())
	return m
}

func condition(conds []metav1.Condition, t string) metav1.Condition {
	for _, c := range conds {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// waitReason waits until VMProvisioned has the reason and returns the machine. CAPI's patch
// helper writes conditions and the rest of status in separate calls, so the state that goes with
// the reason is waited for too.
func (f *fixture) waitReason(t *testing.T, reason string) *infrav1.VCenterMachine {
	t.Helper()
	var m *infrav1.VCenterMachine
	NewWithT(t).Eventually(func(g Gomega) {
		m = f.get(g)
		c := condition(m.Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(c.Reason).To(Equal(reason), "conditions: %+v", m.Status.Conditions)
		if state, ok := stateOf[reason]; ok {
			g.Expect(m.Status.Provisioning.State).To(Equal(state))
		}
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	return m
}

// stateOf is the lifecycle state that comes with a VMProvisioned reason.
var stateOf = map[string]infrav1.ProvisioningState{
	infrav1.WaitingForAddressesReason: infrav1.StateWaitingForAddresses,
	infrav1.ProvisionedReason:         infrav1.StateProvisioned,
	infrav1.CloningReason:             infrav1.StateCloning,
}

// vc is the test's own vCenter client (not the manager's).
func vc(g Gomega) *vim25.Client {
	c, err := vim25.NewClient(ctx, soap.NewClient(vcsim.URL, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(session.NewManager(c).Login(ctx, vcsim.URL.User)).To(Succeed())
	return c
}

// vmsWithUUID lists the VMs whose instance UUID is uuid.
func vmsWithUUID(g Gomega, c *vim25.Client, uuid string) []mo.VirtualMachine {
	m := view.NewManager(c)
	v, err := m.CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = v.Destroy(ctx) }()
	var all, out []mo.VirtualMachine
	g.Expect(v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"config", "runtime.powerState", "name"}, &all)).To(Succeed())
	for _, vm := range all {
		if vm.Config != nil && strings.EqualFold(vm.Config.InstanceUuid, uuid) {
			out = append(out, vm)
		}
	}
	return out
}

// extraConfig returns a VM's extraConfig as a map.
func extraConfig(vm mo.VirtualMachine) map[string]string {
	out := map[string]string{}
	for _, o := range vm.Config.ExtraConfig {
		ov := o.GetOptionValue()
		out[ov.Key] = fmt.Sprint(ov.Value)
	}
	return out
}

// guestSets plays the guest: VMware Tools reporting an IP, the bootstrap script writing its
// status with rpctool. vcsim takes both as extraConfig (SET.* keys become guest properties).
func guestSets(g Gomega, c *vim25.Client, ref types.ManagedObjectReference, kv map[string]string) {
	var opts []types.BaseOptionValue
	for k, v := range kv {
		opts = append(opts, &types.OptionValue{Key: k, Value: v})
	}
	task, err := object.NewVirtualMachine(c, ref).Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: opts})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(ctx)).To(Succeed())
}

// readVM reads one VM's properties.
func readVM(g Gomega, c *vim25.Client, ref types.ManagedObjectReference) mo.VirtualMachine {
	var vm mo.VirtualMachine
	g.Expect(property.DefaultCollector(c).RetrieveOne(ctx, ref, []string{"config", "runtime.powerState", "guest"}, &vm)).To(Succeed())
	return vm
}

func vmRef(id string) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "VirtualMachine", Value: id}
}

// randSuffix is a short random name suffix.
func randSuffix() string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// deviceNames lists a VM's devices, for failure messages.
func deviceNames(vm mo.VirtualMachine) string {
	var names []string
	for _, d := range vm.Config.Hardware.Device {
		names = append(names, fmt.Sprintf("%T/%d", d, d.GetVirtualDevice().Key))
	}
	return strings.Join(names, " ")
}
