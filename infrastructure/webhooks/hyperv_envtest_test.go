package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func hvMachine(name string, mutate func(*infrav1.HyperVMachineSpec)) *infrav1.HyperVMachine {
	m := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	m.Spec = infrav1.HyperVMachineSpec{
		ParentDisk: `D:\images\win2022.vhdx`,
		Network:    []infrav1.HyperVNetworkDevice{{IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1"}},
	}
	mutate(&m.Spec)
	return m
}

func hvCluster(name string, mutate func(*infrav1.HyperVClusterSpec)) *infrav1.HyperVCluster {
	c := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	c.Spec = infrav1.HyperVClusterSpec{
		Hosts:         []infrav1.HyperVHost{{Name: "hv1", Address: "hv1.example.com", CredentialsRef: infrav1.SecretReference{Name: "hv"}}},
		VirtualSwitch: "External",
	}
	mutate(&c.Spec)
	return c
}

func TestHyperVMachineAdmission(t *testing.T) {
	apiServer(t)
	cases := []struct {
		name   string
		mutate func(*infrav1.HyperVMachineSpec)
		// field and msg of the expected rejection; "" = accepted. (CRD) marks rules the API
		// server enforces before the webhook sees the object.
		field, msg string
	}{
		{"static", func(*infrav1.HyperVMachineSpec) {}, "", ""},
		{"Linux", func(s *infrav1.HyperVMachineSpec) { s.OS = infrav1.OSLinux }, "", ""},
		{"trySoft", func(s *infrav1.HyperVMachineSpec) { s.PowerOffMode = infrav1.PowerOffTrySoft }, "", ""},
		{"Secure Boot off", func(s *infrav1.HyperVMachineSpec) { s.SecureBoot = &infrav1.HyperVSecureBoot{Enabled: ptr.To(false)} }, "", ""},
		{"dynamic memory", func(s *infrav1.HyperVMachineSpec) {
			s.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 1024, MaximumMiB: 8192}
		}, "", ""},

		{"UNC parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `\\fs01\images\win.vhdx` },
			"spec.parentDisk", "not a UNC or device path"},
		{"VHD parent disk", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = `D:\images\win.vhd` },
			"spec.parentDisk", "must name a .vhdx file"},
		{"Linux with the Windows template", func(s *infrav1.HyperVMachineSpec) {
			s.OS, s.SecureBoot = infrav1.OSLinux, &infrav1.HyperVSecureBoot{Template: infrav1.SecureBootMicrosoftWindows}
		}, "spec.secureBoot.template", "Linux does not boot with the MicrosoftWindows template; use MicrosoftUEFICertificateAuthority"},
		{"guest credentials on Linux", func(s *infrav1.HyperVMachineSpec) {
			s.OS, s.GuestCredentialsRef = infrav1.OSLinux, &infrav1.SecretReference{Name: "admin"}
		}, "spec.guestCredentialsRef", "through PowerShell Direct"},
		{"gateway outside subnet", func(s *infrav1.HyperVMachineSpec) { s.Network[0].Gateway4 = "10.0.1.1" },
			"spec.network[0].gateway4", "is not in the subnet of any static IPv4 address"},
		{"memory outside dynamic range (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 512, MaximumMiB: 2048}
		}, "spec", "dynamicMemory needs minimumMiB <= memoryMiB <= maximumMiB"},
		{"nested virtualization with dynamic memory (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.NestedVirtualization = true
			s.DynamicMemory = &infrav1.HyperVDynamicMemory{MinimumMiB: 1024, MaximumMiB: 8192}
		}, "spec", "nestedVirtualization needs static memory"},
		{"parent disk from a share", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", &infrav1.HyperVParentDiskSource{URL: `\\fs01\images\win.vhdx`, SHA256: strings.Repeat("AB", 32)}
		}, "", ""},
		{"VM settings", func(s *infrav1.HyperVMachineSpec) {
			s.CheckpointType, s.AutomaticCheckpoints, s.AutomaticStopAction = infrav1.CheckpointProduction, ptr.To(true), infrav1.StopShutDown
			s.AutomaticStartAction, s.AutomaticStartDelaySeconds = infrav1.StartAlways, ptr.To[int32](120)
		}, "", ""},
		{"both parent disk and source (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDiskSource = &infrav1.HyperVParentDiskSource{URL: "https://images/win.vhdx", SHA256: strings.Repeat("ab", 32)}
		}, "spec.parentDisk", "set exactly one of parentDisk and parentDiskSource"},
		{"neither parent disk nor source (CRD)", func(s *infrav1.HyperVMachineSpec) { s.ParentDisk = "" },
			"spec.parentDisk", "set exactly one of parentDisk and parentDiskSource"},
		{"short sha256 (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", &infrav1.HyperVParentDiskSource{URL: "https://images/win.vhdx", SHA256: "abc"}
		}, "spec.parentDiskSource.sha256", "at least 64 chars"},
		{"ftp source (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.ParentDisk, s.ParentDiskSource = "", &infrav1.HyperVParentDiskSource{URL: "ftp://images/win.vhdx", SHA256: strings.Repeat("ab", 32)}
		}, "spec.parentDiskSource.url", "should match"},
		{"start delay without a start (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.AutomaticStartAction, s.AutomaticStartDelaySeconds = infrav1.StartNothing, ptr.To[int32](10)
		}, "spec", "automaticStartDelaySeconds needs an automaticStartAction other than Nothing"},
		{"automatic checkpoints disabled (CRD)", func(s *infrav1.HyperVMachineSpec) {
			s.CheckpointType, s.AutomaticCheckpoints = infrav1.CheckpointDisabled, ptr.To(true)
		}, "spec", "automaticCheckpoints needs a checkpointType other than Disabled"},
		{"unknown stop action (CRD)", func(s *infrav1.HyperVMachineSpec) { s.AutomaticStopAction = "Hibernate" },
			"spec.automaticStopAction", "Unsupported value"},
		{"VLAN 4095 (CRD)", func(s *infrav1.HyperVMachineSpec) { s.Network[0].VLANID = ptr.To[int32](4095) },
			"spec.network[0].vlanID", "less than or equal to 4094"},
		{"nine adapters (CRD)", func(s *infrav1.HyperVMachineSpec) {
			for range 8 {
				s.Network = append(s.Network, infrav1.HyperVNetworkDevice{DHCP4: true})
			}
		}, "spec.network", "must have at most 8 items"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := hvMachine(fmt.Sprintf("hv%d", i), tc.mutate)
			err := k8s.Create(context.Background(), m)
			if tc.field != "" {
				expectInvalid(g, err, tc.field, tc.msg)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			// The response carries the stored, defaulted object.
			g.Expect(m.Spec.Processors).To(Equal(int32(2)))
			g.Expect(m.Spec.MemoryMiB).To(Equal(int64(4096)))
			g.Expect(m.Spec.SecureBoot).NotTo(BeNil())
			switch {
			case m.Spec.OS == infrav1.OSLinux:
				g.Expect(m.Spec.SecureBoot.Template).To(Equal(infrav1.SecureBootMicrosoftUEFICertificateAuthority))
			case m.Spec.PowerOffMode == infrav1.PowerOffTrySoft:
				g.Expect(m.Spec.GuestSoftPowerOffTimeout).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}), "only the webhook sets it")
			case m.Spec.DynamicMemory != nil:
				g.Expect(m.Spec.DynamicMemory.BufferPercent).To(Equal(int32(20)))
			default:
				g.Expect(m.Spec.OS).To(Equal(infrav1.OSWindows))
				g.Expect(m.Spec.PowerOffMode).To(Equal(infrav1.PowerOffHard))
				g.Expect(m.Spec.SecureBoot.Template).To(Equal(infrav1.SecureBootMicrosoftWindows))
				g.Expect(*m.Spec.SecureBoot.Enabled).To(Equal(tc.name != "Secure Boot off"), "an explicit false survives the schema default")
			}
		})
	}
}

func TestHyperVMachineSpecIsImmutable(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	m := hvMachine("hv-immutable", func(*infrav1.HyperVMachineSpec) {})
	g.Expect(k8s.Create(ctx, m)).To(Succeed())

	// The provider sets providerID once, with metadata changes.
	m.Spec.ProviderID = "hyperv://hv1/0b1c2d3e-0000-0000-0000-000000000001"
	m.Finalizers = []string{"infrastructure.cluster.x-k8s.io/hypervmachine"}
	g.Expect(k8s.Update(ctx, m)).To(Succeed())

	changed := m.DeepCopy()
	changed.Spec.ProviderID = "hyperv://hv2/0b1c2d3e-0000-0000-0000-000000000001"
	expectInvalid(g, k8s.Update(ctx, changed), "spec.providerID", "field is immutable once set")

	changed = m.DeepCopy()
	changed.Spec.Processors = 8
	expectInvalid(g, k8s.Update(ctx, changed), "spec.processors",
		"spec.processors: Invalid value: field is immutable: create a new HyperVMachineTemplate and roll out the MachineDeployment")

	m.Finalizers = nil
	g.Expect(k8s.Update(ctx, m)).To(Succeed(), "metadata stays mutable")
}

func TestHyperVMachineTemplate(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	tpl := &infrav1.HyperVMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hv-win", Namespace: "default"}}
	tpl.Spec.Template.Spec = hvMachine("", func(s *infrav1.HyperVMachineSpec) { s.OS = infrav1.OSLinux }).Spec
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	g.Expect(tpl.Spec.Template.Spec.SecureBoot.Template).To(Equal(infrav1.SecureBootMicrosoftUEFICertificateAuthority), "the template spec is defaulted")

	// Metadata may change, and leaving out defaults is no change.
	tpl.Labels = map[string]string{"team": "a"}
	tpl.Spec.Template.Spec.SecureBoot = nil
	tpl.Spec.Template.Spec.Processors = 0
	g.Expect(k8s.Update(ctx, tpl)).To(Succeed())

	tpl.Spec.Template.Spec.MemoryMiB = 16384
	expectInvalid(g, k8s.Update(ctx, tpl), "spec.template.spec.memoryMiB",
		"HyperVMachineTemplate spec is immutable; create a new template and point the MachineDeployment")

	bad := &infrav1.HyperVMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hv-bad", Namespace: "default"}}
	bad.Spec.Template.Spec = hvMachine("", func(s *infrav1.HyperVMachineSpec) {
		s.ProviderID, s.ParentDisk = "hyperv://hv1/42", `images\win.vhdx`
	}).Spec
	err := k8s.Create(ctx, bad)
	expectInvalid(g, err, "spec.template.spec.providerID", "a template must not have one")
	expectInvalid(g, err, "spec.template.spec.parentDisk", "must be an absolute path")
}

func TestHyperVClusterAdmission(t *testing.T) {
	apiServer(t)
	cases := []struct {
		name       string
		mutate     func(*infrav1.HyperVClusterSpec)
		field, msg string
	}{
		{"one host", func(*infrav1.HyperVClusterSpec) {}, "", ""},
		{"failure domains", func(s *infrav1.HyperVClusterSpec) {
			s.FailureDomains = []infrav1.HyperVFailureDomain{{Name: "rack-a", ControlPlane: true}}
			s.Hosts[0].FailureDomain = "rack-a"
		}, "", ""},
		{"URL address", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].Address = "https://hv1.example.com" },
			"spec.hosts[0].address", "not a URL"},
		{"UNC vmPath", func(s *infrav1.HyperVClusterSpec) { s.VMPath = `\\fs01\vms` }, "spec.vmPath", "not a UNC"},
		{"unknown failure domain", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].FailureDomain = "rack-a" },
			"spec.hosts[0].failureDomain", "names no entry of spec.failureDomains"},
		{"failure domain without a host", func(s *infrav1.HyperVClusterSpec) {
			s.FailureDomains = []infrav1.HyperVFailureDomain{{Name: "rack-a"}}
		}, "spec.failureDomains[0].name", "has no host"},
		{"ca bundle not PEM", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].CABundle = []byte("not a certificate") },
			"spec.hosts[0].caBundle", "at least one PEM-encoded x509 certificate"},
		{"insecure with ca bundle (CRD)", func(s *infrav1.HyperVClusterSpec) {
			s.Hosts[0].CABundle, s.Hosts[0].InsecureSkipTLSVerify = []byte("x"), true
		}, "spec.hosts[0]", "insecureSkipTLSVerify cannot be combined with caBundle"},
		{"duplicate host (CRD)", func(s *infrav1.HyperVClusterSpec) { s.Hosts = append(s.Hosts, s.Hosts[0]) },
			"spec.hosts[1]", "Duplicate value"},
		{"hosts with the cluster's credentials", func(s *infrav1.HyperVClusterSpec) {
			s.Hosts[0].CredentialsRef, s.CredentialsRef = infrav1.SecretReference{}, infrav1.HyperVIdentityReference{Name: "hv"}
		}, "", ""},
		{"a host without credentials (CRD)", func(s *infrav1.HyperVClusterSpec) { s.Hosts[0].CredentialsRef = infrav1.SecretReference{} },
			"spec", "set spec.credentialsRef, or a credentialsRef on every host"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := hvCluster(fmt.Sprintf("hvc%d", i), tc.mutate)
			err := k8s.Create(context.Background(), c)
			if tc.field != "" {
				expectInvalid(g, err, tc.field, tc.msg)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.Spec.Hosts[0].Port).To(Equal(int32(5986)), "schema default")
			g.Expect(c.Spec.Hosts[0].AuthType).To(Equal(infrav1.WinRMAuthNTLM), "schema default")
			g.Expect(c.Spec.VMPath).To(Equal(`C:\ProgramData\capwin\vms`), "schema default")
			g.Expect(c.Spec.DiskPath).To(Equal(`C:\ProgramData\capwin\disks`), "schema default")
		})
	}
}

func TestHyperVClusterAndTemplateUpdate(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	c := hvCluster("hv-update", func(*infrav1.HyperVClusterSpec) {})
	g.Expect(k8s.Create(ctx, c)).To(Succeed())

	c.Spec.Hosts = append(c.Spec.Hosts, infrav1.HyperVHost{Name: "hv2", Address: "10.0.0.6", CredentialsRef: infrav1.SecretReference{Name: "hv"}})
	c.Spec.Hosts[0].Address = "10.0.0.5"
	c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443}
	g.Expect(k8s.Update(ctx, c)).To(Succeed(), "hosts change; the endpoint is set once")

	c.Spec.Hosts = c.Spec.Hosts[1:]
	g.Expect(k8s.Update(ctx, c)).To(Succeed(), "a host may be removed")

	c.Spec.ControlPlaneEndpoint.Host = "10.0.0.11"
	expectInvalid(g, k8s.Update(ctx, c), "spec.controlPlaneEndpoint.host", "field is immutable: once set")

	tpl := &infrav1.HyperVClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hv-class", Namespace: "default"}}
	tpl.Spec.Template.Spec = hvCluster("", func(*infrav1.HyperVClusterSpec) {}).Spec
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	tpl.Spec.Template.Spec.VirtualSwitch = "Other"
	expectInvalid(g, k8s.Update(ctx, tpl), "spec.template.spec.virtualSwitch", "HyperVClusterTemplate spec is immutable")

	bad := &infrav1.HyperVClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hv-bad", Namespace: "default"}}
	bad.Spec.Template.Spec = hvCluster("", func(s *infrav1.HyperVClusterSpec) { s.DiskPath = "disks" }).Spec
	expectInvalid(g, k8s.Create(ctx, bad), "spec.template.spec.diskPath", "starts with a drive letter")
}
