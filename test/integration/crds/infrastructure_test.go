// Package crds checks the schema and CEL rules of the generated infrastructure CRDs against a
// real kube-apiserver.
package crds

import (
	"context"
	"fmt"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/envtest"
)

var k8s client.Client

func TestMain(m *testing.M) {
	env, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	_ = infrav1.AddToScheme(scheme)
	k8s, err = client.New(env.Config, client.Options{Scheme: scheme})
	code := 1
	if err == nil {
		code = m.Run()
	}
	_ = env.Stop()
	os.Exit(code)
}

func machine(name string, mutate func(*infrav1.VCenterMachineSpec)) *infrav1.VCenterMachine {
	m := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: infrav1.VCenterMachineSpec{Template: "win2022", Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}}}
	mutate(&m.Spec)
	return m
}

func TestVCenterMachineSchema(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*infrav1.VCenterMachineSpec)
		want   string
	}{
		{"dhcp", func(*infrav1.VCenterMachineSpec) {}, ""},
		{"static", func(s *infrav1.VCenterMachineSpec) {
			s.Network = []infrav1.NetworkDevice{{NetworkName: "n", IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"}}}
		}, ""},
		{"linked clone", func(s *infrav1.VCenterMachineSpec) { s.CloneMode = infrav1.LinkedClone; s.Snapshot = "base" }, ""},
		{"linked clone without snapshot", func(s *infrav1.VCenterMachineSpec) { s.CloneMode = infrav1.LinkedClone }, "linkedClone needs the template's snapshot"},
		{"linked clone with disk", func(s *infrav1.VCenterMachineSpec) {
			s.CloneMode, s.Snapshot, s.DiskGiB = infrav1.LinkedClone, "base", 100
		}, "linkedClone cannot grow the disk"},
		{"efi with secure boot and vTPM", func(s *infrav1.VCenterMachineSpec) {
			s.Firmware, s.SecureBoot, s.VTPM = infrav1.FirmwareEFI, ptr.To(true), true
		}, ""},
		{"secure boot off without firmware", func(s *infrav1.VCenterMachineSpec) { s.SecureBoot = ptr.To(false) }, ""},
		{"secure boot without firmware", func(s *infrav1.VCenterMachineSpec) { s.SecureBoot = ptr.To(true) }, "secureBoot needs firmware efi"},
		{"vTPM with bios", func(s *infrav1.VCenterMachineSpec) { s.Firmware, s.VTPM = infrav1.FirmwareBIOS, true }, "vTPM needs firmware efi"},
		{"bad firmware", func(s *infrav1.VCenterMachineSpec) { s.Firmware = "uefi" }, `Unsupported value: "uefi"`},
		{"DirectPath I/O and vGPU devices", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](0x10de), DeviceID: ptr.To[int32](0x1eb8)}, {VGPUProfile: "grid_t4-4q"}}
		}, ""},
		{"PCI device with vendor only", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](0x10de)}}
		}, "vendorId and deviceId go together"},
		{"PCI device with ids and profile", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](0x10de), DeviceID: ptr.To[int32](1), VGPUProfile: "grid_t4-4q"}}
		}, "set either vendorId and deviceId (DirectPath I/O) or vGPUProfile"},
		{"empty PCI device", func(s *infrav1.VCenterMachineSpec) { s.PCIDevices = []infrav1.VCenterPCIDevice{{}} }, "set either vendorId and deviceId"},
		{"PCI vendor id too large", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = []infrav1.VCenterPCIDevice{{VendorID: ptr.To[int32](70000), DeviceID: ptr.To[int32](1)}}
		}, "spec.pciDevices[0].vendorId"},
		{"nine PCI devices", func(s *infrav1.VCenterMachineSpec) {
			s.PCIDevices = make([]infrav1.VCenterPCIDevice, 9)
			for i := range s.PCIDevices {
				s.PCIDevices[i].VGPUProfile = "grid_t4-1q"
			}
		}, "spec.pciDevices: Too many"},
		{"dhcp and static", func(s *infrav1.VCenterMachineSpec) { s.Network[0].IPAddrs = []string{"10.0.0.21/24"} }, "dhcp4 and static IPv4 addresses exclude each other"},
		{"bad CIDR", func(s *infrav1.VCenterMachineSpec) {
			s.Network = []infrav1.NetworkDevice{{NetworkName: "n", IPAddrs: []string{"10.0.0.300/24"}}}
		}, "must be an address in CIDR form"},
		{"v6 gateway4", func(s *infrav1.VCenterMachineSpec) { s.Network[0].Gateway4 = "fd00::1" }, "must be an IPv4 address"},
		{"no network", func(s *infrav1.VCenterMachineSpec) { s.Network = nil }, "spec.network"},
		{"bad os", func(s *infrav1.VCenterMachineSpec) { s.OS = "Darwin" }, `Unsupported value: "Darwin"`},
		{"timeout without trySoft", func(s *infrav1.VCenterMachineSpec) { s.GuestSoftPowerOffTimeout = &metav1.Duration{} }, "only used with powerOffMode trySoft"},
		{"tiny memory", func(s *infrav1.VCenterMachineSpec) { s.MemoryMiB = 64 }, "spec.memoryMiB"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := machine(fmt.Sprintf("m%d", i), tc.mutate)
			err := k8s.Create(context.Background(), m)
			if tc.want != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Spec.OS).To(Equal(infrav1.OSWindows))
			g.Expect(m.Spec.PowerOffMode).To(Equal(infrav1.PowerOffHard))
		})
	}
}

func TestVCenterClusterSchema(t *testing.T) {
	base := func() infrav1.VCenterClusterSpec {
		return infrav1.VCenterClusterSpec{Server: "https://vcenter.example.com", Datacenter: "dc1",
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-credentials"}, Thumbprint: "AB:" + repeatPairs(31)}
	}
	cases := []struct {
		name   string
		mutate func(*infrav1.VCenterClusterSpec)
		want   string
	}{
		{"thumbprint", func(*infrav1.VCenterClusterSpec) {}, ""},
		{"explicit insecure", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint, s.Insecure = "", true }, ""},
		{"no verification", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = "" }, "set thumbprint or caBundle"},
		{"insecure and thumbprint", func(s *infrav1.VCenterClusterSpec) { s.Insecure = true }, "insecure cannot be combined"},
		{"http server", func(s *infrav1.VCenterClusterSpec) { s.Server = "http://vcenter" }, "spec.server"},
		{"bad thumbprint", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = "xyz" }, "spec.thumbprint"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "default"}, Spec: base()}
			tc.mutate(&c.Spec)
			err := k8s.Create(context.Background(), c)
			if tc.want != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

// TestVCenterClusterServerImmutable: the API server itself refuses a change of server or
// datacenter (a CEL transition rule), so a VCenterCluster written with the webhooks off cannot
// point its machines away from their VMs, which a delete would then leave behind.
func TestVCenterClusterServerImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: "moved", Namespace: "default"},
		Spec: infrav1.VCenterClusterSpec{Server: "https://vcenter.example.com", Datacenter: "dc1",
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-credentials"}, Insecure: true}}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	server := c.DeepCopy()
	server.Spec.Server = "https://other-vcenter.example.com"
	g.Expect(k8s.Update(ctx, server)).To(MatchError(And(ContainSubstring("spec.server"), ContainSubstring("field is immutable"))))
	dc := c.DeepCopy()
	dc.Spec.Datacenter = "dc2"
	g.Expect(k8s.Update(ctx, dc)).To(MatchError(And(ContainSubstring("spec.datacenter"), ContainSubstring("field is immutable"))))
	other := c.DeepCopy()
	other.Spec.Insecure, other.Spec.Thumbprint = false, "AB:"+repeatPairs(31)
	g.Expect(k8s.Update(ctx, other)).To(Succeed(), "other fields still change")
}

func repeatPairs(n int) string {
	s := "00"
	for range n - 1 {
		s += ":00"
	}
	return s
}

// TestVCenterFailureDomainZoneRegion: the API server itself refuses a failure domain with a zone
// and no region (or the reverse), and a change of a domain's zone or region (CEL transition rules
// on the list's items, correlated by name), while a new domain may bring its own.
func TestVCenterFailureDomainZoneRegion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	zone, region := &infrav1.VCenterTag{Category: "k8s-zone", Name: "a"}, &infrav1.VCenterTag{Category: "k8s-region", Name: "west"}
	domain := func(name string, z, r *infrav1.VCenterTag) infrav1.VCenterFailureDomain {
		return infrav1.VCenterFailureDomain{Name: name, Placement: infrav1.Placement{Datastore: "ds-" + name}, Zone: z, Region: r,
			Networks: []string{"pg-" + name}, HostGroup: &infrav1.VCenterHostGroup{Name: "hosts-" + name}}
	}
	c := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: "zoned", Namespace: "default"},
		Spec: infrav1.VCenterClusterSpec{Server: "https://vcenter.example.com", Datacenter: "dc1",
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-credentials"}, Insecure: true,
			FailureDomains: []infrav1.VCenterFailureDomain{domain("a", zone, nil)}}}
	g.Expect(k8s.Create(ctx, c)).To(MatchError(ContainSubstring("set both zone and region, or neither")))
	c.Spec.FailureDomains = []infrav1.VCenterFailureDomain{domain("a", zone, region)}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	g.Expect(c.Spec.FailureDomains[0].HostGroup.Mode).To(Equal(infrav1.HostGroupShould), "the default mode")

	moved := c.DeepCopy()
	moved.Spec.FailureDomains[0].Zone = &infrav1.VCenterTag{Category: "k8s-zone", Name: "b"}
	g.Expect(k8s.Update(ctx, moved)).To(MatchError(ContainSubstring("zone is immutable")))
	dropped := c.DeepCopy()
	dropped.Spec.FailureDomains[0].Zone, dropped.Spec.FailureDomains[0].Region = nil, nil
	g.Expect(k8s.Update(ctx, dropped)).To(MatchError(ContainSubstring("region is immutable")))
	added := c.DeepCopy()
	added.Spec.FailureDomains = append(added.Spec.FailureDomains, domain("b", &infrav1.VCenterTag{Category: "k8s-zone", Name: "b"}, region))
	added.Spec.FailureDomains[0].Networks = []string{"pg-other"}
	g.Expect(k8s.Update(ctx, added)).To(Succeed(), "a new domain, and networks that change")
}
