package badinput_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/test/badinput"
)

func validHyperVMachine() infrav1.HyperVMachineSpec {
	return infrav1.HyperVMachineSpec{ParentDisk: parentDisk, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}
}

// hypervMachineRows break each rule of webhooks.ValidateHyperVMachineSpec that the schema lets by.
var hypervMachineRows = []row[infrav1.HyperVMachineSpec]{
	{"relative parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `golden\win2022.vhdx` }, "parentDisk"},
	{"UNC parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `\\fs01\golden\win2022.vhdx` }, "parentDisk"},
	{"parent disk with ..", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\golden\..\win2022.vhdx` }, "parentDisk"},
	{"VHD parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\golden\win2022.vhd` }, "parentDisk"},
	{"parent disk source share with ..", func(s *infrav1.HyperVMachineSpec) {
		s.ParentDisk, s.ParentDiskSource = "", &infrav1.HyperVParentDiskSource{URL: `\\fs01\golden\..\win2022.vhdx`, SHA256: strings.Repeat("a", 64)}
	}, "parentDiskSource.url"},
	{"parent disk source URL with a password", func(s *infrav1.HyperVMachineSpec) {
		s.ParentDisk, s.ParentDiskSource = "", &infrav1.HyperVParentDiskSource{URL: "https://u:p@images.example.com/win2022.vhdx", SHA256: strings.Repeat("a", 64)}
	}, "parentDiskSource.url"},
	{"guest credentials on Linux", func(s *infrav1.HyperVMachineSpec) {
		s.OS, s.GuestCredentialsRef = infrav1.OSLinux, &infrav1.SecretReference{Name: "admin"}
	}, "guestCredentialsRef"},
	{"Linux with the Windows Secure Boot template", func(s *infrav1.HyperVMachineSpec) {
		s.OS, s.SecureBoot = infrav1.OSLinux, &infrav1.HyperVSecureBoot{Enabled: ptr.To(true), Template: infrav1.SecureBootMicrosoftWindows}
	}, "secureBoot.template"},
	{"gateway outside the subnet", func(s *infrav1.HyperVMachineSpec) {
		s.Network[0] = infrav1.HyperVNetworkDevice{IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.1.1"}
	}, "network[0].gateway4"},
	{"MAC twice", func(s *infrav1.HyperVMachineSpec) {
		s.Network = []infrav1.HyperVNetworkDevice{{DHCP4: true, MACAddr: "00:15:5d:00:00:01"}, {DHCP4: true, MACAddr: "00:15:5D:00:00:01"}}
	}, "network[1].macAddr"},
	{"route through a next hop outside the subnet", func(s *infrav1.HyperVMachineSpec) {
		s.Network[0] = infrav1.HyperVNetworkDevice{IPAddrs: []string{"10.0.0.21/24"},
			NetworkDeviceOptions: infrav1.NetworkDeviceOptions{Routes: []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.9.1"}}}}
	}, "network[0].routes[0].via"},
}

// hypervClusterRows break each rule of webhooks.ValidateHyperVClusterSpec that the schema lets by.
var hypervClusterRows = []row[infrav1.HyperVClusterSpec]{
	{"relative vmPath", func(s *infrav1.HyperVClusterSpec) { s.VMPath = `vms` }, "vmPath"},
	{"UNC diskPath", func(s *infrav1.HyperVClusterSpec) { s.DiskPath = `\\fs01\disks` }, "diskPath"},
	{"diskPath with ..", func(s *infrav1.HyperVClusterSpec) { s.DiskPath = `C:\a\..\..\Windows` }, "diskPath"},
	{"host address is a URL", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "https://" + wsSrv.Host + "/wsman" }, "hosts[0].address"},
	{"host address with a port", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = fmt.Sprintf("%s:%d", wsSrv.Host, wsSrv.Port) }, "hosts[0].address"},
	{"host listed twice", func(s *infrav1.HyperVClusterSpec) {
		twin := s.Hosts[0]
		twin.Name = "hv1-again"
		s.Hosts = append(s.Hosts, twin)
	}, "hosts[1].address"},
	{"CA bundle not PEM", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].CABundle = []byte("not a certificate") }, "hosts[0].caBundle"},
	{"unknown failure domain", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].FailureDomain = "rack-a" }, "hosts[0].failureDomain"},
	{"failure domain without a host", func(s *infrav1.HyperVClusterSpec) {
		s.FailureDomains = []infrav1.HyperVFailureDomain{{Name: "rack-a"}}
	}, "failureDomains[0].name"},
}

// hypervBackend: HyperVMachines and HyperVClusters on the simulated host. The machines' fixture
// waits until the HyperVCluster reconciler found the host.
var hypervBackend = backend{
	name: "hyperv",
	fixture: func(t *testing.T) *fixture {
		f := newFixture(t, &infrav1.HyperVCluster{Spec: validHyperVCluster()}, false)
		f.waitHostsProbed(t)
		return f
	},
	machineRows: cases(hypervMachineRows, validHyperVMachine, func(s infrav1.HyperVMachineSpec) machineObjects {
		tpl := &infrav1.HyperVMachineTemplate{Spec: infrav1.HyperVMachineTemplateSpec{Template: infrav1.HyperVMachineTemplateResource{Spec: s}}}
		m := &infrav1.HyperVMachine{Spec: s}
		_, tplErr := (&webhooks.HyperVMachineTemplate{}).ValidateCreate(ctx, tpl.DeepCopy())
		_, mErr := (&webhooks.HyperVMachine{}).ValidateCreate(ctx, m.DeepCopy())
		return machineObjects{template: tpl, templateStatus: &tpl.Status, machine: m, templateErr: tplErr, machineErr: mErr}
	}),
	clusterRows: cases(hypervClusterRows, validHyperVCluster, func(s infrav1.HyperVClusterSpec) clusterObjects {
		c := &infrav1.HyperVCluster{Spec: s}
		_, cErr := (&webhooks.HyperVCluster{}).ValidateCreate(ctx, c.DeepCopy())
		_, tplErr := (&webhooks.HyperVClusterTemplate{}).ValidateCreate(ctx, &infrav1.HyperVClusterTemplate{
			Spec: infrav1.HyperVClusterTemplateSpec{Template: infrav1.HyperVClusterTemplateResource{Spec: s}}})
		return clusterObjects{cluster: c, clusterErr: cErr, templateErr: tplErr}
	}),
	machine: func() badinput.Object { return &infrav1.HyperVMachine{Spec: validHyperVMachine()} },
	undefaulted: func() (machine, func(Gomega)) {
		spec := validHyperVMachine()
		spec.PowerOffMode = infrav1.PowerOffTrySoft // the webhook adds guestSoftPowerOffTimeout and secureBoot
		m := &infrav1.HyperVMachine{Spec: spec}
		return m, func(g Gomega) { g.Expect(m.Spec.SecureBoot).To(BeNil(), "webhook defaults are used, not written") }
	},
	vms: hypervVMs,
}

// waitHostsProbed waits until the HyperVCluster reconciler found the host and marks the Cluster's
// infrastructure provisioned.
func (f *fixture) waitHostsProbed(t *testing.T) {
	t.Helper()
	hc := &infrav1.HyperVCluster{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "win"}, hc)).To(Succeed())
		g.Expect(ptr.Deref(hc.Status.Initialization.Provisioned, false)).To(BeTrue(), "%+v", hc.Status.Conditions)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	f.provisioned(t)
}
