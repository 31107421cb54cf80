package hyperv_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/scenario"
)

// hypervMachines lends the shared scenarios (test/framework/scenario) this suite's fixtures on
// the simulated hosts.
type hypervMachines struct{}

func (hypervMachines) Client() client.Client { return k8s }

func (hypervMachines) AddMachine(t *testing.T, name string, os infrav1.OperatingSystem, userData []byte) scenario.Handle {
	t.Helper()
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.OS = os
	return &hypervMachine{mc: f.addMachine(t, name, "", userData, spec)}
}

type hypervMachine struct {
	mc  *machine
	iso string // the config drive's path on its host, once seen
}

func scenarioMachine(m *infrav1.HyperVMachine) scenario.Machine {
	return scenario.Machine{UID: string(m.UID), ComputerName: m.Status.ComputerName, ProviderID: m.Spec.ProviderID,
		Provisioned: ptr.Deref(m.Status.Initialization.Provisioned, false), Addresses: m.Status.Addresses, Conditions: m.Status.Conditions}
}

func (m *hypervMachine) Wait(t *testing.T, reason string) scenario.Machine {
	t.Helper()
	return scenarioMachine(m.mc.waitReason(t, reason))
}

func (m *hypervMachine) Get(g Gomega) scenario.Machine { return scenarioMachine(m.mc.get(g)) }

// vm is the machine's VM and the host it is on.
func (m *hypervMachine) vm(g Gomega) (*hypervsim.Host, hypervsim.VM) {
	hm := m.mc.get(g)
	h := host(hm.Status.VM.Host)
	g.Expect(h).NotTo(BeNil(), "host %q", hm.Status.VM.Host)
	vm, ok := vmOf(h, string(hm.UID))
	g.Expect(ok).To(BeTrue())
	return h, vm
}

func (m *hypervMachine) Metadata(g Gomega) guest.Metadata {
	h, vm := m.vm(g)
	g.Expect(vm.DVDs).To(HaveLen(1))
	m.iso = vm.DVDs[0]
	files, err := readDrive(h, vm)
	g.Expect(err).NotTo(HaveOccurred())
	var md guest.Metadata
	g.Expect(yaml.Unmarshal(files["meta-data"], &md)).To(Succeed())
	return md
}

func (m *hypervMachine) ReportAddress(g Gomega, ip string) {
	h, vm := m.vm(g)
	g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) { v.Heartbeat, v.NICs[0].IPs = true, []string{ip} })).To(Succeed())
}

func (m *hypervMachine) ReportBootstrap(g Gomega, status string) {
	h, vm := m.vm(g)
	g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) { v.KVP["capwin.bootstrap.status"] = status })).To(Succeed())
}

// VMs counts the machine's VMs on every host of the suite.
func (m *hypervMachine) VMs(Gomega) int {
	n := 0
	for _, h := range hosts {
		if _, ok := vmOf(h.Host, string(m.mc.hvm.UID)); ok {
			n++
		}
	}
	return n
}

func (m *hypervMachine) PoweredOn(g Gomega) bool {
	_, vm := m.vm(g)
	return vm.State == "Running"
}

// UserDataOnVM: the config drive is attached, or its file is still on the host.
func (m *hypervMachine) UserDataOnVM(g Gomega) bool {
	h, vm := m.vm(g)
	g.Expect(m.iso).NotTo(BeEmpty(), "the config drive was not seen")
	return len(vm.DVDs) > 0 || h.File(m.iso) != nil
}

func (m *hypervMachine) LinkNode(g Gomega, node string) {
	m.mc.m.Status.NodeRef = clusterv1.MachineNodeReference{Name: node}
	g.Expect(k8s.Status().Update(ctx, m.mc.m)).To(Succeed())
}

func (m *hypervMachine) Delete(g Gomega) { g.Expect(k8s.Delete(ctx, m.mc.hvm)).To(Succeed()) }

func (m *hypervMachine) Exists(g Gomega) bool {
	err := k8s.Get(ctx, client.ObjectKeyFromObject(m.mc.hvm), &infrav1.HyperVMachine{})
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err == nil
}
