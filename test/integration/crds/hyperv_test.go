package crds

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func hvMachine(name string, mutate func(*infrav1.HyperVMachineSpec)) *infrav1.HyperVMachine {
	m := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: infrav1.HyperVMachineSpec{ParentDisk: `D:\images\win2022.vhdx`, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}}
	mutate(&m.Spec)
	return m
}

func TestHyperVMachineSchema(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*infrav1.HyperVMachineSpec)
		want   string
	}{
		{"dhcp on the cluster's switch", func(*infrav1.HyperVMachineSpec) {}, ""},
		{"static on a VLAN", func(s *infrav1.HyperVMachineSpec) {
			s.Network = []infrav1.HyperVNetworkDevice{{NetworkName: "External", VLANID: ptr.To[int32](4094),
				IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"}}}
		}, ""},
		{"dynamic memory", func(s *infrav1.HyperVMachineSpec) {
			s.MemoryMiB, s.DynamicMemory = 2048, &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 2048}
		}, ""},
		{"pinned host", func(s *infrav1.HyperVMachineSpec) { s.Host = "hv-01" }, ""},
		{"nested virtualization", func(s *infrav1.HyperVMachineSpec) { s.NestedVirtualization = true }, ""},
		{"nested virtualization with dynamic memory", func(s *infrav1.HyperVMachineSpec) {
			s.NestedVirtualization = true
			s.MemoryMiB, s.DynamicMemory = 2048, &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 2048}
		}, "nestedVirtualization needs static memory"},
		{"memory below dynamic minimum", func(s *infrav1.HyperVMachineSpec) {
			s.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 8192, MaximumMiB: 16384}
		}, "dynamicMemory needs minimumMiB <= memoryMiB <= maximumMiB"},
		{"memory above dynamic maximum", func(s *infrav1.HyperVMachineSpec) {
			s.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 1024}
		}, "dynamicMemory needs minimumMiB <= memoryMiB <= maximumMiB"},
		{"odd memory", func(s *infrav1.HyperVMachineSpec) { s.MemoryMiB = 4097 }, "spec.memoryMiB in body should be a multiple of 2"},
		{"tiny memory", func(s *infrav1.HyperVMachineSpec) { s.MemoryMiB = 256 }, "spec.memoryMiB"},
		{"buffer too small", func(s *infrav1.HyperVMachineSpec) {
			s.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 8192, BufferPercent: 1}
		}, "spec.dynamicMemory.bufferPercent"},
		{"too many processors", func(s *infrav1.HyperVMachineSpec) { s.Processors = 241 }, "spec.processors"},
		{"huge disk", func(s *infrav1.HyperVMachineSpec) { s.DiskGiB = 70000 }, "spec.diskGiB"},
		{"VLAN 0", func(s *infrav1.HyperVMachineSpec) { s.Network[0].VLANID = ptr.To[int32](0) }, "spec.network[0].vlanID"},
		{"dhcp and static", func(s *infrav1.HyperVMachineSpec) { s.Network[0].IPAddrs = []string{"10.0.0.21/24"} }, "dhcp4 and static IPv4 addresses exclude each other"},
		{"bad CIDR", func(s *infrav1.HyperVMachineSpec) {
			s.Network = []infrav1.HyperVNetworkDevice{{IPAddrs: []string{"10.0.0.300/24"}}}
		}, "must be an address in CIDR form"},
		{"bad MAC", func(s *infrav1.HyperVMachineSpec) { s.Network[0].MACAddr = "00155d000001" }, "spec.network[0].macAddr"},
		{"no network", func(s *infrav1.HyperVMachineSpec) { s.Network = nil }, "spec.network"},
		{"no parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = "" }, "spec.parentDisk"},
		{"upper-case host", func(s *infrav1.HyperVMachineSpec) { s.Host = "HV1" }, "spec.host"},
		{"bad Secure Boot template", func(s *infrav1.HyperVMachineSpec) {
			s.SecureBoot = &infrav1.HyperVSecureBoot{Template: "Linux"}
		}, `spec.secureBoot.template: Unsupported value: "Linux"`},
		{"GPU partition with bounds", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, Partition: &infrav1.HyperVGPUPartition{
				VRAM: &infrav1.HyperVGPUResource{Min: 1, Optimal: 2, Max: 3}}}
		}, ""},
		{"two assigned GPUs", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 2} }, ""},
		{"two GPU partitions", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, Count: 2} }, "a VM gets one GPU partition"},
		{"partition with a location path", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, LocationPath: "PCIROOT(0)#PCI(0300)"}
		}, "locationPath is for mode Assign"},
		{"location path for two GPUs", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Count: 2, LocationPath: "PCIROOT(0)#PCI(0300)"}
		}, "locationPath names one device"},
		{"assigned GPU with partition bounds", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign, Partition: &infrav1.HyperVGPUPartition{}}
		}, "partition is for mode Partition"},
		{"partition bounds out of order", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition, Partition: &infrav1.HyperVGPUPartition{
				Compute: &infrav1.HyperVGPUResource{Min: 3, Optimal: 2, Max: 3}}}
		}, "want min <= optimal <= max"},
		{"assigned GPU with dynamic memory", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign}
			s.MemoryMiB, s.DynamicMemory = 2048, &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 2048}
		}, "gpu mode Assign needs static memory"},
		{"assigned GPU saved with the host", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUAssign}
			s.AutomaticStopAction = infrav1.StopSave
		}, "gpu mode Assign needs automaticStopAction TurnOff"},
		{"GPU partition saved with the host", func(s *infrav1.HyperVMachineSpec) {
			s.GPU = &infrav1.HyperVGPU{Mode: infrav1.GPUPartition}
			s.AutomaticStopAction = infrav1.StopSave
		}, ""},
		{"bad GPU mode", func(s *infrav1.HyperVMachineSpec) { s.GPU = &infrav1.HyperVGPU{Mode: "Share"} }, `Unsupported value: "Share"`},
		{"timeout without trySoft", func(s *infrav1.HyperVMachineSpec) { s.GuestSoftPowerOffTimeout = &metav1.Duration{} }, "only used with powerOffMode trySoft"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := hvMachine(fmt.Sprintf("hv%d", i), tc.mutate)
			err := k8s.Create(context.Background(), m)
			if tc.want != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Spec.OS).To(Equal(infrav1.OSWindows))
			g.Expect(m.Spec.PowerOffMode).To(Equal(infrav1.PowerOffHard))
			g.Expect(m.Spec.Processors).To(Equal(int32(2)))
			if m.Spec.DynamicMemory != nil {
				g.Expect(m.Spec.DynamicMemory.BufferPercent).To(Equal(int32(20)))
			} else {
				g.Expect(m.Spec.MemoryMiB).To(Equal(int64(4096)))
			}
		})
	}
}

func TestHyperVSecureBootDefault(t *testing.T) {
	g := NewWithT(t)
	m := hvMachine("hv-secure-boot", func(s *infrav1.HyperVMachineSpec) { s.SecureBoot = &infrav1.HyperVSecureBoot{} })
	g.Expect(k8s.Create(context.Background(), m)).To(Succeed())
	g.Expect(m.Spec.SecureBoot.Enabled).To(Equal(ptr.To(true)))

	off := hvMachine("hv-secure-boot-off", func(s *infrav1.HyperVMachineSpec) {
		s.SecureBoot = &infrav1.HyperVSecureBoot{Enabled: ptr.To(false)}
	})
	g.Expect(k8s.Create(context.Background(), off)).To(Succeed())
	g.Expect(off.Spec.SecureBoot.Enabled).To(Equal(ptr.To(false)), "an explicit false is kept")
}

func hvClusterSpec() infrav1.HyperVClusterSpec {
	return infrav1.HyperVClusterSpec{VirtualSwitch: "External",
		Hosts: []infrav1.HyperVHost{{Name: "hv1", Address: "hv1.example.com", CredentialsRef: infrav1.SecretReference{Name: "hv"}}}}
}

func TestHyperVClusterSchema(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*infrav1.HyperVClusterSpec)
		want   string
	}{
		{"one host", func(*infrav1.HyperVClusterSpec) {}, ""},
		{"explicit insecure", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].InsecureSkipTLSVerify = true }, ""},
		{"ca bundle", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].CABundle = []byte("pem") }, ""},
		{"insecure and ca bundle", func(s *infrav1.HyperVClusterSpec) {
			s.Hosts[0].InsecureSkipTLSVerify, s.Hosts[0].CABundle = true, []byte("pem")
		}, "insecureSkipTLSVerify cannot be combined with caBundle"},
		{"no hosts", func(s *infrav1.HyperVClusterSpec) { s.Hosts = nil }, "spec.hosts"},
		{"duplicate host", func(s *infrav1.HyperVClusterSpec) { s.Hosts = append(s.Hosts, s.Hosts[0]) }, "Duplicate value"},
		{"bad host name", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Name = "HV_1" }, "spec.hosts[0].name"},
		{"no address", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "" }, "spec.hosts[0].address"},
		{"bad port", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Port = 70000 }, "spec.hosts[0].port"},
		{"Kerberos", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].AuthType = "Kerberos" }, `Unsupported value: "Kerberos"`},
		{"no switch", func(s *infrav1.HyperVClusterSpec) { s.VirtualSwitch = "" }, "spec.virtualSwitch"},
		{"bad failure domain name", func(s *infrav1.HyperVClusterSpec) {
			s.FailureDomains = []infrav1.HyperVFailureDomain{{Name: "Rack A"}}
		}, "spec.failureDomains[0].name"},
		{"failover cluster on a CSV", failoverOn(`C:\ClusterStorage\Volume1\capwin`), ""},
		{"failover cluster on a CSV, lower case", failoverOn(`c:\clusterstorage\volume2\a\b`), ""},
		{"failover cluster on a local disk", failoverOn(`D:\capwin`), "storagePath must be a folder on a Cluster Shared Volume"},
		{"failover cluster on a volume's root", failoverOn(`C:\ClusterStorage\Volume1\`), "storagePath must be a folder on a Cluster Shared Volume"},
		{"failover cluster name too long", func(s *infrav1.HyperVClusterSpec) {
			s.FailoverCluster = &infrav1.HyperVFailoverCluster{Name: "a-very-long-cluster-name", StoragePath: `C:\ClusterStorage\Volume1\capwin`}
		}, "spec.failoverCluster.name"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hvc%d", i), Namespace: "default"}, Spec: hvClusterSpec()}
			tc.mutate(&c.Spec)
			err := k8s.Create(context.Background(), c)
			if tc.want != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.Spec.Hosts[0].Port).To(Equal(int32(5986)))
			g.Expect(c.Spec.Hosts[0].AuthType).To(Equal(infrav1.WinRMAuthNTLM))
			g.Expect(c.Spec.VMPath).To(Equal(`C:\ProgramData\capwin\vms`))
			g.Expect(c.Spec.DiskPath).To(Equal(`C:\ProgramData\capwin\disks`))
		})
	}
}

// TestHyperVStatus writes the status the reconcilers write, through the status subresource.
func TestHyperVStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "hv-status", Namespace: "default"}, Spec: hvClusterSpec()}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	c.Status.Initialization.Provisioned = ptr.To(true)
	c.Status.Hosts = []infrav1.HyperVHostStatus{
		{Name: "hv1", Available: true, FreeMemoryMiB: 65536, VMs: 3},
		{Name: "hv2", Available: false, Message: "WinRM: connection refused"},
	}
	g.Expect(k8s.Status().Update(ctx, c)).To(Succeed())
	got := &infrav1.HyperVCluster{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
	g.Expect(got.Status.Hosts).To(Equal(c.Status.Hosts))

	m := hvMachine("hv-status", func(*infrav1.HyperVMachineSpec) {})
	g.Expect(k8s.Create(ctx, m)).To(Succeed())
	m.Status.VM = infrav1.VMReference{ID: "0b1c2d3e-0000-0000-0000-000000000001", Host: "hv1"}
	g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	g.Expect(m.Status.VM.Host).To(Equal("hv1"))

	tpl := &infrav1.HyperVMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hv-status", Namespace: "default"}}
	tpl.Spec.Template.Spec = m.Spec
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	tpl.Status.NodeInfo.OperatingSystem = "windows"
	g.Expect(k8s.Status().Update(ctx, tpl)).To(Succeed())

	ct := &infrav1.HyperVClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hv-status", Namespace: "default"}}
	ct.Spec.Template.Spec = hvClusterSpec()
	g.Expect(k8s.Create(ctx, ct)).To(Succeed())
}

func failoverOn(path string) func(*infrav1.HyperVClusterSpec) {
	return func(s *infrav1.HyperVClusterSpec) {
		s.FailoverCluster = &infrav1.HyperVFailoverCluster{Name: "HVCLU1", StoragePath: path}
	}
}

// TestHyperVFailoverClusterImmutable: failoverCluster cannot be added, changed or removed (CEL
// transition rules), even with the webhooks off.
func TestHyperVFailoverClusterImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	plain := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "hvc-fc-add", Namespace: "default"}, Spec: hvClusterSpec()}
	g.Expect(k8s.Create(ctx, plain)).To(Succeed())
	failoverOn(`C:\ClusterStorage\Volume1\capwin`)(&plain.Spec)
	g.Expect(k8s.Update(ctx, plain)).To(MatchError(ContainSubstring("failoverCluster cannot be added or removed")))

	clustered := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "hvc-fc-change", Namespace: "default"}, Spec: hvClusterSpec()}
	failoverOn(`C:\ClusterStorage\Volume1\capwin`)(&clustered.Spec)
	g.Expect(k8s.Create(ctx, clustered)).To(Succeed())
	clustered.Spec.FailoverCluster.StoragePath = `C:\ClusterStorage\Volume2\capwin`
	g.Expect(k8s.Update(ctx, clustered)).To(MatchError(ContainSubstring("failoverCluster cannot change")))
	clustered.Spec.FailoverCluster = nil
	g.Expect(k8s.Update(ctx, clustered)).To(MatchError(ContainSubstring("failoverCluster cannot be added or removed")))
}
