package vcenter_test

import (
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/scenario"
)

// vcenterMachines lends the shared scenarios (test/framework/scenario) this suite's fixtures on vcsim.
type vcenterMachines struct {
	spec func(*infrav1.VCenterMachineSpec) // changes defaultSpec, when set
}

func (vcenterMachines) Client() client.Client { return k8s }

func (p vcenterMachines) AddMachine(t *testing.T, name string, os infrav1.OperatingSystem, userData []byte) scenario.Handle {
	t.Helper()
	f := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.OS = os
	if p.spec != nil {
		p.spec(&spec)
	}
	f.addMachine(t, name, userData, spec)
	return vcenterMachine{f}
}

type vcenterMachine struct{ f *fixture }

func scenarioMachine(m *infrav1.VCenterMachine) scenario.Machine {
	return scenario.Machine{UID: string(m.UID), ComputerName: m.Status.ComputerName, ProviderID: m.Spec.ProviderID,
		Provisioned: ptr.Deref(m.Status.Initialization.Provisioned, false), Addresses: m.Status.Addresses, Conditions: m.Status.Conditions}
}

func (m vcenterMachine) Wait(t *testing.T, reason string) scenario.Machine {
	t.Helper()
	return scenarioMachine(m.f.waitReason(t, reason))
}

func (m vcenterMachine) Get(g Gomega) scenario.Machine { return scenarioMachine(m.f.get(g)) }

// vm is the machine's one VM, read with the test's own client.
func (m vcenterMachine) vm(g Gomega) (*vim25.Client, mo.VirtualMachine) {
	c := vc(g)
	vms := vmsWithUUID(g, c, string(m.f.get(g).UID))
	g.Expect(vms).To(HaveLen(1))
	return c, vms[0]
}

func (m vcenterMachine) Metadata(g Gomega) guest.Metadata {
	_, vm := m.vm(g)
	raw, err := base64.StdEncoding.DecodeString(extraConfig(vm)["guestinfo.metadata"])
	g.Expect(err).NotTo(HaveOccurred())
	var md guest.Metadata
	g.Expect(yaml.Unmarshal(raw, &md)).To(Succeed())
	return md
}

func (m vcenterMachine) ReportAddress(g Gomega, ip string) {
	c, vm := m.vm(g)
	guestSets(g, c, vm.Self, map[string]string{"SET.guest.ipAddress": ip})
}

func (m vcenterMachine) ReportBootstrap(g Gomega, status string) {
	c, vm := m.vm(g)
	guestSets(g, c, vm.Self, map[string]string{"guestinfo.capwin.bootstrap.status": status})
}

func (m vcenterMachine) VMs(g Gomega) int { return len(vmsWithUUID(g, vc(g), string(m.f.vm.UID))) }

func (m vcenterMachine) PoweredOn(g Gomega) bool {
	_, vm := m.vm(g)
	return vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
}

// UserDataOnVM: guestinfo.userdata (and its encoding) is still in the VM's extraConfig. The
// metadata stays.
func (m vcenterMachine) UserDataOnVM(g Gomega) bool {
	c, vm := m.vm(g)
	ec := extraConfig(readVM(g, c, vm.Self))
	g.Expect(ec).To(HaveKey("guestinfo.metadata"))
	_, data := ec["guestinfo.userdata"]
	_, encoding := ec["guestinfo.userdata.encoding"]
	return data || encoding
}

func (m vcenterMachine) LinkNode(g Gomega, node string) {
	m.f.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: node}
	g.Expect(k8s.Status().Update(ctx, m.f.machine)).To(Succeed())
}

func (m vcenterMachine) Delete(g Gomega) { g.Expect(k8s.Delete(ctx, m.f.vm)).To(Succeed()) }

func (m vcenterMachine) Exists(g Gomega) bool {
	err := k8s.Get(ctx, client.ObjectKeyFromObject(m.f.vm), &infrav1.VCenterMachine{})
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err == nil
}
