package vcenter

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// domainCluster is a VCenterCluster with one failure domain, fd, in vcsim's DRS cluster.
func domainCluster(fd infrav1.VCenterFailureDomain) *infrav1.VCenterCluster {
	fd.Placement.ResourcePool = vcsimCluster + "/Resources"
	return &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"},
		Spec: infrav1.VCenterClusterSpec{Datacenter: "DC0", FailureDomains: []infrav1.VCenterFailureDomain{fd}}}
}

// domainMachine is the backend and scope of a machine of vc's first failure domain, as
// Provider.Backend builds them (placementFor, the domain).
func domainMachine(t *testing.T, sess *Session, vc *infrav1.VCenterCluster, name, uid string, sp *infrav1.VCenterMachineSpec) (*backend, *hypervisor.Scope) {
	t.Helper()
	sp.Template = "DC0_H0_VM0"
	b, s := vcsimMachine(t, sess, name, uid, sp)
	fd := vc.Spec.FailureDomains[0].Name
	b.where = placementFor(vc, s.InfraMachine.(*infrav1.VCenterMachine), fd)
	b.fd = vc.Spec.FailureDomain(fd)
	s.Cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "cluster-uid"}}
	s.Machine = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: clusterv1.MachineSpec{FailureDomain: fd}}
	return b, s
}

// cloned creates the machine's VM and finds it.
func cloned(t *testing.T, b *backend, s *hypervisor.Scope) *hypervisor.VM {
	t.Helper()
	g := NewWithT(t)
	ref, err := b.Create(context.Background(), s)
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
	vm, err := b.Find(context.Background(), s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vm).NotTo(BeNil())
	return vm
}

// run waits for a task started by a backend call.
func run(t *testing.T, b *backend, s *hypervisor.Scope, ref string, err error) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
}

// TestFailureDomainNetworksVcsim: a domain's networks replace the machine's by position: the
// clone's first NIC is backed by the domain's distributed port group, its second keeps the
// machine's own network. A domain naming more networks than the machine has NICs is refused.
func TestFailureDomainNetworksVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	vc := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-a", Networks: []string{"DC0_DVPG0"}})
	sp := spec(func(s *infrav1.VCenterMachineSpec) {
		s.Network = []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}, {NetworkName: "VM Network", DHCP4: true}}
	})
	b, s := domainMachine(t, sess, vc, "win-fd-net", "6c1f0b6e-0000-4000-8000-0000000000f1", sp)
	s.NICs = append(s.NICs, s.NICs[0])
	vm := cloned(t, b, s)

	pg, err := find.NewFinder(sess.Client).SetDatacenter(b.dc).Network(ctx, "DC0_DVPG0")
	g.Expect(err).NotTo(HaveOccurred())
	var dvpg mo.DistributedVirtualPortgroup
	g.Expect(object.NewCommon(sess.Client, pg.Reference()).Properties(ctx, pg.Reference(), []string{"key"}, &dvpg)).To(Succeed())
	devices, err := object.NewVirtualMachine(sess.Client, vmRef(vm.Ref.ID)).Device(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	nics := devices.SelectByType((*types.VirtualEthernetCard)(nil))
	g.Expect(nics).To(HaveLen(2))
	first := nics[0].GetVirtualDevice().Backing
	g.Expect(first).To(BeAssignableToTypeOf(&types.VirtualEthernetCardDistributedVirtualPortBackingInfo{}))
	g.Expect(first.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo).Port.PortgroupKey).To(Equal(dvpg.Key))
	second := nics[1].GetVirtualDevice().Backing
	g.Expect(second).To(BeAssignableToTypeOf(&types.VirtualEthernetCardNetworkBackingInfo{}))
	g.Expect(second.(*types.VirtualEthernetCardNetworkBackingInfo).DeviceName).To(Equal("VM Network"))

	wide := domainCluster(infrav1.VCenterFailureDomain{Name: "rack-b", Networks: []string{"DC0_DVPG0", "VM Network", "VM Network"}})
	b2, s2 := domainMachine(t, sess, wide, "win-fd-wide", "6c1f0b6e-0000-4000-8000-0000000000f2", spec(nil))
	_, err = b2.Create(ctx, s2)
	g.Expect(err).To(HaveOccurred())
	g.Expect(hypervisor.Reason(err)).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(err.Error()).To(ContainSubstring(`failure domain "rack-b" names 3 networks, the machine has 1 NICs`))
}
