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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// vcenterBackend is testMachines on vcsim: a VCenterClusterIdentity, a VCenterCluster, a
// VCenterMachineTemplate and one VCenterMachine (clone, power on, addresses from VMware Tools).
type vcenterBackend struct {
	vcsim *simulator.Server
}

func (b *vcenterBackend) start(t *testing.T, s *suite) {
	model := simulator.VPX()
	NewWithT(t).Expect(model.Create()).To(Succeed())
	t.Cleanup(model.Remove)
	model.Service.TLS = new(tls.Config) // capwin verifies vCenter's certificate
	b.vcsim = model.Service.NewServer()
	t.Cleanup(b.vcsim.Close)
	NewWithT(t).Expect(templates.Mark(t.Context(), b.vcsim.URL, "/DC0/vm/DC0_H0_VM0")).To(Succeed())
	// vcsim's Close waits for every request in flight, and a session's WaitForUpdatesEx waits up
	// to 5 minutes for a change: log the sessions out first (cleanups run last in, first out).
	t.Cleanup(func() { s.sessions.Close(context.Background()) })
	vcsimops.TrustHosts(model, soap.ThumbprintSHA256(b.vcsim.Certificate()))
}

// identity: the VCenterCluster logs in with a Secret of its own namespace; the
// VCenterClusterIdentity takes its Secret in the manager's namespace (the HyperV scenario runs a
// cluster on an identity).
func (b *vcenterBackend) identity(t *testing.T, s *suite, ns string) (client.Object, *infrav1.ClusterIdentityStatus) {
	g := NewWithT(t)
	user := b.vcsim.URL.User.Username()
	pw, _ := b.vcsim.URL.User.Password()
	for _, key := range []client.ObjectKey{{Namespace: ns, Name: "vcenter-identity"}, {Namespace: identityNamespace, Name: "vcenter-login"}} {
		g.Expect(s.admin.Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
			Data:       map[string][]byte{"username": []byte(user), "password": []byte(pw)},
		})).To(Succeed())
	}
	id := &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "vcenter"}, Spec: infrav1.VCenterClusterIdentitySpec{
		ClusterIdentitySpec: infrav1.ClusterIdentitySpec{SecretName: "vcenter-login", AllowedNamespaces: infrav1.AllowedNamespaces{List: []string{ns}}},
		Servers:             []infrav1.VCenterIdentityServer{{Server: "https://" + b.vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(b.vcsim.Certificate())}},
	}}
	return id, &id.Status
}

func (b *vcenterBackend) cluster(ns string, owner metav1.OwnerReference) (conditioned, *infrav1.ClusterInitializationStatus) {
	vc := &infrav1.VCenterCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"},
			OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: infrav1.VCenterClusterSpec{
			Server: "https://" + b.vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(b.vcsim.Certificate()),
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-identity"}, Datacenter: "DC0",
		},
	}
	return vc, &vc.Status.Initialization
}

func vcenterSpec() infrav1.VCenterMachineSpec {
	return infrav1.VCenterMachineSpec{
		Template: "DC0_H0_VM0", Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_H0/Resources"}, CloneMode: infrav1.FullClone,
		Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}, OS: infrav1.OSWindows, PowerOffMode: infrav1.PowerOffHard,
	}
}

func (b *vcenterBackend) template(ns string) (client.Object, *infrav1.MachineTemplateStatus) {
	tmpl := &infrav1.VCenterMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Spec:       infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: vcenterSpec()}},
	}
	return tmpl, &tmpl.Status
}

// published: the sizes the template's spec leaves out are read from the vCenter template.
func (b *vcenterBackend) published(g Gomega, status *infrav1.MachineTemplateStatus) {
	g.Expect(status.Capacity).To(HaveKey(corev1.ResourceCPU))
}

func (b *vcenterBackend) machine(m *clusterv1.Machine) machineObject {
	spec := vcenterSpec()
	spec.NumCPUs, spec.MemoryMiB = 2, 4096
	return &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels,
			OwnerReferences: []metav1.OwnerReference{ownedBy(m, "Machine")}},
		Spec: spec,
	}
}

// boot: the guest boots and VMware Tools reports an address.
func (b *vcenterBackend) boot(t *testing.T, id string) {
	g := NewWithT(t)
	ctx := t.Context()
	c, err := vim25.NewClient(ctx, soap.NewClient(b.vcsim.URL, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(session.NewManager(c).Login(ctx, b.vcsim.URL.User)).To(Succeed())
	task, err := object.NewVirtualMachine(c, types.ManagedObjectReference{Type: "VirtualMachine", Value: id}).
		Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: "SET.guest.ipAddress", Value: "10.0.0.21"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(ctx)).To(Succeed())
}

func (b *vcenterBackend) deleted(Gomega) {}
