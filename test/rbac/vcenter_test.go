package rbac_test

import (
	"context"
	"crypto/tls"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/guestos"
	vcsimops "github.com/capwin/capwin/test/vcsim"
)

var userData = []byte("Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/cloud-config\n\n#cloud-config\n--x--\n")

// testVCenter: a VCenterClusterIdentity, a VCenterCluster, a VCenterMachineTemplate and one VCenterMachine on vcsim from
// create to delete (clone, power on, addresses, providerID, Node link, delete).
func testVCenter(t *testing.T, s *suite) {
	g := NewWithT(t)
	ctx := t.Context()
	model := simulator.VPX()
	g.Expect(model.Create()).To(Succeed())
	t.Cleanup(model.Remove)
	model.Service.TLS = new(tls.Config) // capwin verifies vCenter's certificate
	vcsim := model.Service.NewServer()
	t.Cleanup(vcsim.Close)
	// vcsim's Close waits for every request in flight, and a session's WaitForUpdatesEx waits up
	// to 5 minutes for a change: log the sessions out first (cleanups run last in, first out).
	t.Cleanup(func() { s.sessions.Close(context.Background()) })
	vcsimops.TrustHosts(model, soap.ThumbprintSHA256(vcsim.Certificate()))

	ns := s.namespace(t, "rbac-vc-")
	pw, _ := vcsim.URL.User.Password()
	g.Expect(s.admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "vcenter-identity", Namespace: ns},
		Data:       map[string][]byte{"username": []byte(vcsim.URL.User.Username()), "password": []byte(pw)},
	})).To(Succeed())
	// A VCenterClusterIdentity takes its Secret in the manager's namespace (the HyperV scenario
	// runs a cluster on an identity; this one keeps a Secret of its own).
	g.Expect(s.admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "vcenter-login", Namespace: identityNamespace},
		Data:       map[string][]byte{"username": []byte(vcsim.URL.User.Username()), "password": []byte(pw)},
	})).To(Succeed())
	id := &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "vcenter"}, Spec: infrav1.ClusterIdentitySpec{
		SecretName: "vcenter-login", AllowedNamespaces: infrav1.AllowedNamespaces{List: []string{ns}}}}
	g.Expect(s.admin.Create(ctx, id)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(id), id)).To(Succeed())
		g.Expect(id.Status.Ready).To(BeTrue(), "%+v", id.Status.Conditions)
	})
	cluster := s.cluster(t, ns, "VCenterCluster")
	vc := &infrav1.VCenterCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"},
			OwnerReferences: []metav1.OwnerReference{ownedBy(cluster, "Cluster")}},
		Spec: infrav1.VCenterClusterSpec{
			Server: "https://" + vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(vcsim.Certificate()),
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-identity"}, Datacenter: "DC0",
		},
	}
	g.Expect(s.admin.Create(ctx, vc)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(vc), vc)).To(Succeed())
		g.Expect(ptr.Deref(vc.Status.Initialization.Provisioned, false)).To(BeTrue(), "%+v", vc.Status.Conditions)
	})
	s.infrastructureProvisioned(t, cluster)

	spec := infrav1.VCenterMachineSpec{
		Template: "DC0_H0_VM0", Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_H0/Resources"}, CloneMode: infrav1.FullClone,
		Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}, OS: infrav1.OSWindows, PowerOffMode: infrav1.PowerOffHard,
	}
	tmpl := &infrav1.VCenterMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Spec:       infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: spec}},
	}
	g.Expect(s.admin.Create(ctx, tmpl)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) { // sizes read from the vCenter template
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(tmpl), tmpl)).To(Succeed())
		g.Expect(tmpl.Status.Capacity).To(HaveKey(corev1.ResourceCPU))
	})

	machine := s.machine(t, ns, "win-md-0-rbac", "VCenterMachine", userData)
	spec.NumCPUs, spec.MemoryMiB = 2, 4096
	vm := &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Name: machine.Name, Namespace: ns, Labels: machine.Labels,
			OwnerReferences: []metav1.OwnerReference{ownedBy(machine, "Machine")}},
		Spec: spec,
	}
	g.Expect(s.admin.Create(ctx, vm)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		g.Expect(condition(vm.Status.Conditions, infrav1.VMProvisionedCondition).Reason).To(Equal(infrav1.WaitingForAddressesReason), "%+v", vm.Status.Conditions)
		g.Expect(vm.Status.VM.ID).NotTo(BeEmpty())
	})

	// The guest boots and VMware Tools reports an address.
	c, err := vim25.NewClient(ctx, soap.NewClient(vcsim.URL, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(session.NewManager(c).Login(ctx, vcsim.URL.User)).To(Succeed())
	task, err := object.NewVirtualMachine(c, types.ManagedObjectReference{Type: "VirtualMachine", Value: vm.Status.VM.ID}).
		Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: "SET.guest.ipAddress", Value: "10.0.0.21"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(ctx)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		g.Expect(ptr.Deref(vm.Status.Initialization.Provisioned, false)).To(BeTrue(), "%+v", vm.Status.Conditions)
	})
	s.linkNode(t, s.infra, guestos.NodeName(vm.Status.ComputerName), vm.Spec.ProviderID)

	g.Expect(s.admin.Delete(ctx, vm)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(apierrors.IsNotFound(s.admin.Get(ctx, client.ObjectKeyFromObject(vm), vm))).To(BeTrue(), "finalizers %v", vm.Finalizers)
	})
}
