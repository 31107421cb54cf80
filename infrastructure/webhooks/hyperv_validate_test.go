package webhooks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func validHyperVMachineSpec() infrav1.HyperVMachineSpec {
	return infrav1.HyperVMachineSpec{
		ParentDisk: `D:\images\win2022.vhdx`,
		Network:    []infrav1.HyperVNetworkDevice{{DHCP4: true}},
	}
}

func source(url string) *infrav1.HyperVParentDiskSource {
	return &infrav1.HyperVParentDiskSource{URL: url, SHA256: strings.Repeat("ab", 32)}
}

func secureBoot(enabled bool, template infrav1.SecureBootTemplate) *infrav1.HyperVSecureBoot {
	return &infrav1.HyperVSecureBoot{Enabled: &enabled, Template: template}
}

func TestValidateHyperVMachineSpec(t *testing.T) {
	cases := []specCase[infrav1.HyperVMachineSpec]{
		{"dhcp on the cluster's switch", func(*infrav1.HyperVMachineSpec) {}, "", ""},
		{"named switch with VLAN and static address", func(s *infrav1.HyperVMachineSpec) {
			s.Network[0] = infrav1.HyperVNetworkDevice{NetworkName: "External", VLANID: ptr.To[int32](42),
				IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", MACAddr: "00:15:5d:00:00:01"}
		}, "", ""},
		{"forward slashes and upper-case extension", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = "c:/images/WIN.VHDX" }, "", ""},
		{"guest credentials on Windows", func(s *infrav1.HyperVMachineSpec) {
			s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"}
		}, "", ""},
		{"Linux gets the UEFI CA template", func(s *infrav1.HyperVMachineSpec) { s.OS = infrav1.OSLinux }, "", ""},
		{"naming template giving one name to every machine", func(s *infrav1.HyperVMachineSpec) {
			s.NamingStrategy = &infrav1.NamingStrategy{Template: "{{ .cluster.name | trunc 12 }}"}
		}, "spec.namingStrategy.template", "gives two machines of one MachineDeployment the same name"},
		{"Linux shielded VM", func(s *infrav1.HyperVMachineSpec) {
			s.OS, s.SecureBoot = infrav1.OSLinux, secureBoot(true, infrav1.SecureBootOpenSourceShieldedVM)
		}, "", ""},
		{"Linux without Secure Boot keeps any template", func(s *infrav1.HyperVMachineSpec) {
			s.OS, s.SecureBoot = infrav1.OSLinux, secureBoot(false, infrav1.SecureBootMicrosoftWindows)
		}, "", ""},

		{"parent disk from an https URL", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source("https://images.example.com/win2022.vhdx?sig=x")
		}, "", ""},
		{"parent disk from a share", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\fs01\images\win\2022.VHDX`)
		}, "", ""},
		{"parent disk source over http", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source("http://images/win.vhdx")
		},
			"spec.parentDiskSource.url", "must be an https:// URL"},
		{"parent disk source with credentials", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source("https://u:p@images/win.vhdx")
		},
			"spec.parentDiskSource.url", "must not carry credentials"},
		{"parent disk source share root", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk, s.ParentDiskSource = "", source(`\\fs01\win.vhdx`) },
			"spec.parentDiskSource.url", `must be a UNC path`},
		{"parent disk source share with ..", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\fs01\images\..\win.vhdx`)
		},
			"spec.parentDiskSource.url", "must not contain empty, . or .. segments"},
		{"parent disk source share VHD", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\fs01\images\win.vhd`)
		},
			"spec.parentDiskSource.url", "must name a .vhdx file"},
		{"parent disk source on the host itself (UNC coercion)", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\localhost\C$\ProgramData\x.vhdx`)
		},
			"spec.parentDiskSource.url", "must not name the host itself"},
		{"parent disk source share by IP (NTLM to whoever answers)", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\10.9.8.7\s\x.vhdx`)
		},
			"spec.parentDiskSource.url", "not an IP address"},
		{"parent disk source share by IPv6 literal name", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\fd00--7.ipv6-literal.net\s\x.vhdx`)
		},
			"spec.parentDiskSource.url", "not an IP address"},
		{"parent disk source share over WebDAV (@port)", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source(`\\attacker.example@SSL@8443\s\x.vhdx`)
		},
			"spec.parentDiskSource.url", "must not name a port or protocol"},
		{"parent disk source https on the host itself", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source("https://127.0.0.1:5986/x.vhdx")
		},
			"spec.parentDiskSource.url", "must not name the host itself"},
		{"parent disk source https on [::1]", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", source("https://[::1]/x.vhdx")
		},
			"spec.parentDiskSource.url", "must not name the host itself"},
		{"relative parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `images\win.vhdx` },
			"spec.parentDisk", "must be an absolute path that starts with a drive letter"},
		{"drive-relative parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:win.vhdx` },
			"spec.parentDisk", "starts with a drive letter"},
		{"UNC parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `\\fs01\images\win.vhdx` },
			"spec.parentDisk", "not a UNC or device path"},
		{"device path parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `\\?\C:\images\win.vhdx` },
			"spec.parentDisk", "not a UNC"},
		{"parent disk with ..", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\images\..\win.vhdx` },
			"spec.parentDisk", "must not contain .. segments"},
		{"parent disk with a wildcard", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\images\win?.vhdx` },
			"spec.parentDisk", `must not contain '?'`},
		{"parent disk with a second colon", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\images:x.vhdx` },
			"spec.parentDisk", `must not contain ':'`},
		{"VHD parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `C:\images\win.vhd` },
			"spec.parentDisk", "must name a .vhdx file"},
		{"guest credentials on Linux", func(s *infrav1.HyperVMachineSpec) {
			s.OS, s.GuestCredentialsRef = infrav1.OSLinux, &infrav1.SecretReference{Name: "admin"}
		}, "spec.guestCredentialsRef", "through PowerShell Direct; Linux machines bootstrap with cloud-init"},
		{"Linux with the Windows template", func(s *infrav1.HyperVMachineSpec) {
			s.OS, s.SecureBoot = infrav1.OSLinux, &infrav1.HyperVSecureBoot{Template: infrav1.SecureBootMicrosoftWindows}
		}, "spec.secureBoot.template", "Linux does not boot with the MicrosoftWindows template; use MicrosoftUEFICertificateAuthority"},
		{"gateway outside subnet", func(s *infrav1.HyperVMachineSpec) {
			s.Network[0] = infrav1.HyperVNetworkDevice{IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.1.1"}
		}, "spec.network[0].gateway4", "is not in the subnet of any static IPv4 address of the device (10.0.0.0/24)"},
		{"duplicate MAC", func(s *infrav1.HyperVMachineSpec) {
			s.Network = []infrav1.HyperVNetworkDevice{{DHCP4: true, MACAddr: "00:15:5d:00:00:01"},
				{NetworkName: "Internal", VLANID: ptr.To[int32](7), DHCP4: true, MACAddr: "00:15:5D:00:00:01"}}
		}, "spec.network[1].macAddr", "same as spec.network[0].macAddr"},
		{"data disks", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: "containerd", SizeGiB: 100}, {Name: "logs-1", SizeGiB: 65536, Type: infrav1.DiskFixed}}
		}, "", ""},
		{"duplicate data disk name", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: "data", SizeGiB: 1}, {Name: "data", SizeGiB: 2}}
		}, "spec.dataDisks[1].name", `Duplicate value: "data"`},
		{"33 data disks", func(s *infrav1.HyperVMachineSpec) {
			for i := range 33 {
				s.DataDisks = append(s.DataDisks, infrav1.HyperVDataDisk{Name: infrav1.DataDiskName(fmt.Sprintf("d%d", i)), SizeGiB: 1})
			}
		}, "spec.dataDisks", "must have at most 32 items"},
		{"data disk name not a file name capwin makes", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: `..\evil`, SizeGiB: 1}}
		}, "spec.dataDisks[0].name", "names the file <name>.vhdx"},
		{"data disk name too long", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: infrav1.DataDiskName(strings.Repeat("a", 33)), SizeGiB: 1}}
		}, "spec.dataDisks[0].name", "at most 32"},
		{"empty data disk", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: "data"}}
		}, "spec.dataDisks[0].sizeGiB", "between 1 and 65536"},
		{"data disk over 64 TiB", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: "data", SizeGiB: 65537}}
		}, "spec.dataDisks[0].sizeGiB", "between 1 and 65536"},
		{"vSphere provisioning as the type", func(s *infrav1.HyperVMachineSpec) {
			s.DataDisks = []infrav1.HyperVDataDisk{{Name: "data", SizeGiB: 1, Type: "Thin"}}
		}, "spec.dataDisks[0].type", `supported values: "Dynamic", "Fixed"`},
		{"pool with dhcp4", func(s *infrav1.HyperVMachineSpec) {
			s.Network[0].AddressesFromPools = []corev1.TypedLocalObjectReference{pool(ipam, "InClusterIPPool", "p")}
		}, "spec.network[0].addressesFromPools", "cannot be combined with dhcp4"},
	}
	runSpecCases(t, cases, validHyperVMachineSpec, func(s infrav1.HyperVMachineSpec) field.ErrorList {
		DefaultHyperVMachineSpec(&s)
		return ValidateHyperVMachineSpec(s, field.NewPath("spec"))
	})
}

func TestValidateHyperVMachineTemplateSpecForbidsProviderID(t *testing.T) {
	g := NewWithT(t)
	spec := validHyperVMachineSpec()
	spec.ProviderID = "hyperv://hv1/0b1c2d3e-0000-0000-0000-000000000001"
	expectOne(g, ValidateHyperVMachineTemplateSpec(spec, field.NewPath("spec", "template", "spec")),
		"spec.template.spec.providerID", "a template must not have one")
}

func TestDefaultHyperVMachineSpec(t *testing.T) {
	g := NewWithT(t)
	spec := validHyperVMachineSpec()
	DefaultHyperVMachineSpec(&spec)
	g.Expect(spec.OS).To(Equal(infrav1.OSWindows))
	g.Expect(spec.PowerOffMode).To(Equal(infrav1.PowerOffHard))
	g.Expect(spec.Processors).To(Equal(int32(2)))
	g.Expect(spec.MemoryMiB).To(Equal(int64(4096)))
	g.Expect(spec.SecureBoot).To(Equal(secureBoot(true, infrav1.SecureBootMicrosoftWindows)))
	g.Expect(spec.DynamicMemory).To(BeNil())
	g.Expect(spec.GuestSoftPowerOffTimeout).To(BeNil(), "only trySoft waits")

	spec = validHyperVMachineSpec()
	spec.OS, spec.PowerOffMode = infrav1.OSLinux, infrav1.PowerOffTrySoft
	spec.SecureBoot = &infrav1.HyperVSecureBoot{}
	spec.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 1024, MaximumMiB: 8192}
	spec.DataDisks = []infrav1.HyperVDataDisk{{Name: "data", SizeGiB: 1}, {Name: "logs", SizeGiB: 1, Type: infrav1.DiskFixed}}
	DefaultHyperVMachineSpec(&spec)
	g.Expect(spec.DataDisks[0].Type).To(Equal(infrav1.DiskDynamic))
	g.Expect(spec.DataDisks[1].Type).To(Equal(infrav1.DiskFixed))
	g.Expect(spec.SecureBoot).To(Equal(secureBoot(true, infrav1.SecureBootMicrosoftUEFICertificateAuthority)))
	g.Expect(spec.DynamicMemory.BufferPercent).To(Equal(int32(20)))
	g.Expect(spec.GuestSoftPowerOffTimeout).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}))

	spec.SecureBoot = &infrav1.HyperVSecureBoot{Enabled: ptr.To(false)}
	spec.Processors, spec.MemoryMiB, spec.DynamicMemory.BufferPercent = 8, 16384, 50
	DefaultHyperVMachineSpec(&spec)
	g.Expect(spec.SecureBoot).To(Equal(secureBoot(false, infrav1.SecureBootMicrosoftUEFICertificateAuthority)), "off stays off")
	before := *spec.DeepCopy()
	DefaultHyperVMachineSpec(&spec)
	g.Expect(spec).To(Equal(before), "defaulting is idempotent and keeps set values")
}

func TestHyperVMachineUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := &HyperVMachine{}
	old := &infrav1.HyperVMachine{Spec: validHyperVMachineSpec()}

	// Leaving out or spelling out defaults is no change; setting providerID once is allowed.
	m := old.DeepCopy()
	DefaultHyperVMachineSpec(&m.Spec)
	m.Spec.ProviderID = "hyperv://hv1/42"
	_, err := w.ValidateUpdate(ctx, old, m)
	g.Expect(err).NotTo(HaveOccurred())

	changed := m.DeepCopy()
	changed.Spec.ProviderID = "hyperv://hv2/42"
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.providerID"}))
	g.Expect(err.Error()).To(ContainSubstring("field is immutable once set"))

	changed = m.DeepCopy()
	changed.Spec.ProviderID = ""
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.providerID"}), "providerID cannot be cleared")

	changed = m.DeepCopy()
	changed.Spec.Processors = 4
	changed.Spec.Network[0].NetworkName = "Internal"
	changed.Spec.SecureBoot.Enabled = ptr.To(false)
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.network[0].networkName", "spec.processors", "spec.secureBoot.enabled"}))
	g.Expect(err.Error()).To(ContainSubstring("spec.processors: Invalid value: field is immutable: create a new HyperVMachineTemplate and roll out the MachineDeployment"))

	changed = m.DeepCopy()
	changed.Spec.NestedVirtualization = true
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.nestedVirtualization"}), "Hyper-V sets it only while the VM is off")
}

func validHyperVClusterSpec() infrav1.HyperVClusterSpec {
	return infrav1.HyperVClusterSpec{
		Hosts:         []infrav1.HyperVHost{{Name: "hv1", Address: "hv1.example.com", CredentialsRef: infrav1.SecretReference{Name: "hv"}}},
		VirtualSwitch: "External",
	}
}

// host appends a host named name at address, in failure domain fd.
func host(name, address, fd string) func(*infrav1.HyperVClusterSpec) {
	return func(s *infrav1.HyperVClusterSpec) {
		s.Hosts = append(s.Hosts, infrav1.HyperVHost{Name: name, Address: address, FailureDomain: fd,
			CredentialsRef: infrav1.SecretReference{Name: "hv"}})
	}
}

// hyperVFDs sets the failure domains and puts hv1 in the first.
func hyperVFDs(names ...string) func(*infrav1.HyperVClusterSpec) {
	return func(s *infrav1.HyperVClusterSpec) {
		for _, n := range names {
			s.FailureDomains = append(s.FailureDomains, infrav1.HyperVFailureDomain{Name: n})
		}
		s.Hosts[0].FailureDomain = names[0]
	}
}

func both(a, b func(*infrav1.HyperVClusterSpec)) func(*infrav1.HyperVClusterSpec) {
	return func(s *infrav1.HyperVClusterSpec) { a(s); b(s) }
}

func TestValidateHyperVClusterSpec(t *testing.T) {
	ca := testCA(t)
	cases := []specCase[infrav1.HyperVClusterSpec]{
		{"one host", func(*infrav1.HyperVClusterSpec) {}, "", ""},
		{"IPv4 and IPv6 hosts", both(host("hv2", "10.0.0.5", ""), host("hv3", "fd00::5", "")), "", ""},
		{"upper-case host name", host("hv2", "HV2.Example.COM", ""), "", ""},
		{"same address on another port", func(s *infrav1.HyperVClusterSpec) {
			host("hv2", "hv1.example.com", "")(s)
			s.Hosts[1].Port = 15986
		}, "", ""},
		{"ca bundle", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].CABundle = ca }, "", ""},
		{"paths", func(s *infrav1.HyperVClusterSpec) { s.VMPath, s.DiskPath = `D:\Hyper-V\vms`, `E:/disks` }, "", ""},
		{"drive root", func(s *infrav1.HyperVClusterSpec) { s.DiskPath = `E:\` }, "", ""},
		{"failure domains", both(hyperVFDs("rack-a", "rack-b"), host("hv2", "hv2.example.com", "rack-b")), "", ""},
		{"host outside the failure domains", both(hyperVFDs("rack-a"), host("hv2", "hv2.example.com", "")), "", ""},

		{"relative vmPath", func(s *infrav1.HyperVClusterSpec) { s.VMPath = `vms` }, "spec.vmPath", "starts with a drive letter"},
		{"UNC diskPath", func(s *infrav1.HyperVClusterSpec) { s.DiskPath = `\\fs01\disks` }, "spec.diskPath", "not a UNC"},
		{"diskPath with ..", func(s *infrav1.HyperVClusterSpec) { s.DiskPath = `C:\a\..\..\Windows` }, "spec.diskPath", ".. segments"},
		{"vmPath with a control character", func(s *infrav1.HyperVClusterSpec) { s.VMPath = "C:\\vms\n" }, "spec.vmPath", `must not contain '\n'`},
		{"URL address", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "https://hv1.example.com:5986/wsman" },
			"spec.hosts[0].address", "not a URL"},
		{"address with port", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "hv1.example.com:5986" },
			"spec.hosts[0].address", "must not carry a port: set port"},
		{"bracketed IPv6 address", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "[fd00::5]" },
			"spec.hosts[0].address", "without brackets"},
		{"IPv6 address with zone", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "fe80::5%eth0" },
			"spec.hosts[0].address", "zone"},
		{"address with a space", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "hv 1" },
			"spec.hosts[0].address", "must be an IP address or a DNS name"},
		{"duplicate host name", host("hv1", "hv9.example.com", ""), "spec.hosts[1].name", "same as spec.hosts[0].name"},
		{"host listed twice", func(s *infrav1.HyperVClusterSpec) {
			host("hv2", "HV1.example.com", "")(s)
			s.Hosts[1].Port = 5986 // the default of hv1
		}, "spec.hosts[1].address", "same address and port as spec.hosts[0]"},
		{"ca bundle not PEM", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].CABundle = []byte("hello") },
			"spec.hosts[0].caBundle", "at least one PEM-encoded x509 certificate"},
		{"unknown failure domain", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].FailureDomain = "rack-a" },
			"spec.hosts[0].failureDomain", "names no entry of spec.failureDomains"},
		{"failure domain without a host", hyperVFDs("rack-a", "rack-b"),
			"spec.failureDomains[1].name", "has no host: set failureDomain: rack-b on a host of spec.hosts"},
		{"duplicate failure domain", hyperVFDs("rack-a", "rack-a"), "spec.failureDomains[1].name", "same as spec.failureDomains[0].name"},
		{"failover cluster on a CSV", failover(`C:\ClusterStorage\Volume1\capwin`), "", ""},
		{"failover cluster on a local disk", failover(`D:\capwin`), "spec.failoverCluster.storagePath", "Cluster Shared Volume"},
		{"failover cluster on a volume's root", failover(`C:\ClusterStorage\Volume1`), "spec.failoverCluster.storagePath", "Cluster Shared Volume"},
		{"failover cluster on a share", failover(`\\fs01\capwin`), "spec.failoverCluster.storagePath", "not a UNC"},
	}
	runSpecCases(t, cases, validHyperVClusterSpec, func(s infrav1.HyperVClusterSpec) field.ErrorList {
		return ValidateHyperVClusterSpec(s, field.NewPath("spec"))
	})
}

func TestHyperVClusterUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := &HyperVCluster{}
	old := &infrav1.HyperVCluster{Spec: validHyperVClusterSpec()}
	c := old.DeepCopy()
	c.Spec.Hosts[0].Address = "10.0.0.5"
	host("hv2", "hv2.example.com", "")(&c.Spec)
	c.Spec.VirtualSwitch, c.Spec.VMPath = "Other", `D:\vms`
	c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443}
	_, err := w.ValidateUpdate(ctx, old, c)
	g.Expect(err).NotTo(HaveOccurred(), "hosts, switch, paths change; the endpoint is set once")

	removed := c.DeepCopy()
	removed.Spec.Hosts = removed.Spec.Hosts[1:]
	_, err = w.ValidateUpdate(ctx, c, removed)
	g.Expect(err).NotTo(HaveOccurred(), "a host may be removed")

	moved := c.DeepCopy()
	moved.Spec.ControlPlaneEndpoint.Port = 443
	moved.Spec.Hosts[0].Address = "https://hv1"
	_, err = w.ValidateUpdate(ctx, c, moved)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.controlPlaneEndpoint.port", "spec.hosts[0].address"}))
	g.Expect(err.Error()).To(ContainSubstring("field is immutable: once set, the Cluster and the control plane's certificates use it"))

	cleared := c.DeepCopy()
	cleared.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{}
	_, err = w.ValidateUpdate(ctx, c, cleared)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.controlPlaneEndpoint.host", "spec.controlPlaneEndpoint.port"}))

	// An unchanged spec is not validated again (objects stored before a rule was added).
	legacy := &infrav1.HyperVCluster{Spec: validHyperVClusterSpec()}
	legacy.Spec.VMPath = "vms"
	_, err = w.ValidateUpdate(ctx, legacy, legacy.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
}

func TestHyperVTemplateUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	old := &infrav1.HyperVMachineTemplate{}
	old.Spec.Template.Spec = validHyperVMachineSpec()
	tpl := old.DeepCopy()
	DefaultHyperVMachineSpec(&tpl.Spec.Template.Spec)
	tpl.Labels = map[string]string{"a": "b"}
	_, err := (&HyperVMachineTemplate{}).ValidateUpdate(ctx, old, tpl)
	g.Expect(err).NotTo(HaveOccurred(), "defaults and metadata are no spec change")

	tpl.Spec.Template.Spec.ParentDisk = `D:\images\win2025.vhdx`
	_, err = (&HyperVMachineTemplate{}).ValidateUpdate(ctx, old, tpl)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.template.spec.parentDisk"}))
	g.Expect(err.Error()).To(ContainSubstring("HyperVMachineTemplate spec is immutable; create a new template and point the MachineDeployment"))

	oldCT := &infrav1.HyperVClusterTemplate{}
	oldCT.Spec.Template.Spec = validHyperVClusterSpec()
	ct := oldCT.DeepCopy()
	ct.Spec.Template.Spec.Hosts[0].CredentialsRef.Name = "other"
	_, err = (&HyperVClusterTemplate{}).ValidateUpdate(ctx, oldCT, ct)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.template.spec.hosts[0].credentialsRef.name"}))
	g.Expect(err.Error()).To(ContainSubstring("point the ClusterClass at it"))
}

func failover(path string) func(*infrav1.HyperVClusterSpec) {
	return func(s *infrav1.HyperVClusterSpec) {
		s.FailoverCluster = &infrav1.HyperVFailoverCluster{Name: "hvclu1", StoragePath: path}
	}
}
