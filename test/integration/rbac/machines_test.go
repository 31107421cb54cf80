package rbac_test

import (
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/guestos"
)

var userData = []byte("Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/cloud-config\n\n#cloud-config\n--x--\n")

// backend is one provider in testMachines: its simulator, its objects and the guest's boot.
type backend interface {
	// start runs the provider's simulator until the test ends.
	start(t *testing.T, s *suite)
	// identity creates the login Secrets and returns a cluster identity (not yet created) that
	// allows namespace ns, and its status.
	identity(t *testing.T, s *suite, ns string) (client.Object, *infrav1.ClusterIdentityStatus)
	// cluster returns infrastructure cluster "win" of namespace ns, owned by the Cluster.
	cluster(ns string, owner metav1.OwnerReference) (conditioned, *infrav1.ClusterInitializationStatus)
	// template returns machine template "win-md-0" of namespace ns and its status.
	template(ns string) (client.Object, *infrav1.MachineTemplateStatus)
	// published checks what the template reconciler published in the template's status.
	published(g Gomega, status *infrav1.MachineTemplateStatus)
	// machine returns the infrastructure machine of Machine m.
	machine(m *clusterv1.Machine) machineObject
	// boot has the guest of VM id report an address.
	boot(t *testing.T, id string)
	// deleted checks the hypervisor once the machine is deleted.
	deleted(g Gomega)
}

// conditioned is an infrastructure cluster.
type conditioned interface {
	client.Object
	GetConditions() []metav1.Condition
}

// machineObject is a VCenterMachine or a HyperVMachine.
type machineObject interface {
	client.Object
	GetMachineStatus() *infrav1.MachineStatus
	GetProviderID() *string
}

// testMachines runs, for each provider, a cluster identity, an infrastructure cluster, a machine
// template and one machine from create to delete (create, addresses, providerID, Node link,
// delete).
func testMachines(t *testing.T, s *suite) {
	for _, tc := range []struct {
		name, kind, nsPrefix string
		backend              backend
	}{
		{"vcenter", "VCenter", "rbac-vc-", &vcenterBackend{}},
		{"hyperv", "HyperV", "rbac-hv-", &hypervBackend{}},
	} {
		t.Run(tc.name, func(t *testing.T) { testMachine(t, s, tc.backend, tc.kind, tc.nsPrefix) })
	}
}

// testMachine is testMachines on one provider, whose kinds are named kind+"Cluster" etc.
func testMachine(t *testing.T, s *suite, b backend, kind, nsPrefix string) {
	g := NewWithT(t)
	ctx := t.Context()
	b.start(t, s)
	ns := s.namespace(t, nsPrefix)
	id, idStatus := b.identity(t, s, ns)
	g.Expect(s.admin.Create(ctx, id)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(id), id)).To(Succeed())
		g.Expect(idStatus.Ready).To(BeTrue(), "%+v", idStatus.Conditions)
	})
	cluster := s.cluster(t, ns, kind+"Cluster")
	infraCluster, init := b.cluster(ns, ownedBy(cluster, "Cluster"))
	g.Expect(s.admin.Create(ctx, infraCluster)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(infraCluster), infraCluster)).To(Succeed())
		g.Expect(ptr.Deref(init.Provisioned, false)).To(BeTrue(), "%+v", infraCluster.GetConditions())
	})
	s.infrastructureProvisioned(t, cluster)

	tmpl, tmplStatus := b.template(ns)
	g.Expect(s.admin.Create(ctx, tmpl)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(tmpl), tmpl)).To(Succeed())
		b.published(g, tmplStatus)
	})

	vm := b.machine(s.machine(t, ns, "win-md-0-rbac", kind+"Machine", userData))
	status := vm.GetMachineStatus()
	g.Expect(s.admin.Create(ctx, vm)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		g.Expect(condition(status.Conditions, infrav1.VMProvisionedCondition).Reason).To(Equal(infrav1.WaitingForAddressesReason), "%+v", status.Conditions)
		g.Expect(status.VM.ID).NotTo(BeEmpty())
	})
	b.boot(t, status.VM.ID)
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		g.Expect(ptr.Deref(status.Initialization.Provisioned, false)).To(BeTrue(), "%+v", status.Conditions)
	})
	s.linkNode(t, s.infra, guestos.NodeName(status.ComputerName), *vm.GetProviderID())

	g.Expect(s.admin.Delete(ctx, vm)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(apierrors.IsNotFound(s.admin.Get(ctx, client.ObjectKeyFromObject(vm), vm))).To(BeTrue(), "finalizers %v", vm.GetFinalizers())
	})
	b.deleted(g)
}
