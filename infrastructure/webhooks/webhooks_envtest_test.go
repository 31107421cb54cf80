package webhooks_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/test/envtest"
)

var k8s client.Client

// TestMain serves the webhooks (webhooks.SetupWithManager) to a real kube-apiserver that has the
// generated webhook configurations installed, so CRD schema, CEL and webhooks act together.
// With -short no API server is started and the admission tests skip.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	env, err := envtest.Start(filepath.Join(envtest.RepoRoot(), "infrastructure/config/webhook"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := serve(env, m)
	_ = env.Stop()
	os.Exit(code)
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = infrav1.AddToScheme(s)
	return s
}

func serve(env *envtest.Environment, m *testing.M) int {
	cancel, err := env.ServeWebhooks(scheme(), webhooks.SetupWithManager)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cancel()
	if k8s, err = client.New(env.Config, client.Options{Scheme: scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// apiServer skips t when TestMain started no API server.
func apiServer(t *testing.T) Gomega {
	t.Helper()
	if k8s == nil {
		t.Skip("no API server (-short)")
	}
	return NewWithT(t)
}

// expectInvalid asserts an Invalid error with a cause at field and msg in its message.
func expectInvalid(g Gomega, err error, field, msg string) {
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	var fields []string
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			fields = append(fields, c.Field)
		}
	}
	g.Expect(fields).To(ContainElement(field), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(msg))
}

func machine(name string, mutate func(*infrav1.VCenterMachineSpec)) *infrav1.VCenterMachine {
	m := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	m.Spec = infrav1.VCenterMachineSpec{
		Template: "/dc1/vm/templates/win2022",
		Network:  []infrav1.NetworkDevice{{NetworkName: "VM Network", IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1"}},
	}
	mutate(&m.Spec)
	return m
}

func cluster(name string, mutate func(*infrav1.VCenterClusterSpec)) *infrav1.VCenterCluster {
	c := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	c.Spec = infrav1.VCenterClusterSpec{
		Server: "https://vcenter.example.com", Thumbprint: strings.Repeat("AB:", 31) + "AB",
		IdentityRef: infrav1.VCenterIdentityReference{Name: "vc"}, Datacenter: "dc1",
	}
	mutate(&c.Spec)
	return c
}

func TestMachineAdmission(t *testing.T) {
	apiServer(t)
	cases := []struct {
		name   string
		mutate func(*infrav1.VCenterMachineSpec)
		// field and msg of the expected rejection; "" = accepted. (CEL) marks rules the API
		// server enforces before the webhook sees the object.
		field, msg string
	}{
		{"static", func(*infrav1.VCenterMachineSpec) {}, "", ""},
		{"trySoft gets a timeout", func(s *infrav1.VCenterMachineSpec) { s.PowerOffMode = infrav1.PowerOffTrySoft }, "", ""},
		{"gateway outside subnet", func(s *infrav1.VCenterMachineSpec) { s.Network[0].Gateway4 = "10.0.1.1" },
			"spec.network[0].gateway4", "is not in the subnet of any static IPv4 address"},
		{"gateway without IPv4 address", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", DHCP6: true, Gateway4: "10.0.0.1"}
		}, "spec.network[0].gateway4", "the device has no IPv4 address"},
		{"multicast MAC", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MACAddr = "01:00:5e:00:00:01" },
			"spec.network[0].macAddr", "must be a unicast MAC address"},
		{"duplicate MAC", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].MACAddr = "00:50:56:aa:bb:01"
			s.Network = append(s.Network, infrav1.NetworkDevice{NetworkName: "VM Network", DHCP4: true, MACAddr: "00:50:56:AA:BB:01"})
		}, "spec.network[1].macAddr", "same as spec.network[0].macAddr"},
		{"pool with dhcp4", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", DHCP4: true, AddressesFromPools: []corev1.TypedLocalObjectReference{
				{APIGroup: ptr.To("ipam.cluster.x-k8s.io"), Kind: "InClusterIPPool", Name: "p"}}}
		}, "spec.network[0].addressesFromPools", "cannot be combined with dhcp4"},
		{"pool without apiGroup", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].AddressesFromPools = []corev1.TypedLocalObjectReference{{Kind: "InClusterIPPool", Name: "p"}}
		}, "spec.network[0].addressesFromPools[0].apiGroup", "the pool's API group"},
		{"template with ..", func(s *infrav1.VCenterMachineSpec) { s.Template = "/dc1/vm/../win" }, "spec.template", "must not contain .. segments"},
		{"template folder", func(s *infrav1.VCenterMachineSpec) { s.Template = "/dc1/vm/" }, "spec.template", "must not end with /"},
		{"content library linked clone", func(s *infrav1.VCenterMachineSpec) {
			s.ContentLibrary, s.CloneMode, s.Snapshot = "lib", infrav1.LinkedClone, "base"
		}, "spec.cloneMode", "content library items can only be full-cloned"},
		{"bad nameserver (CEL)", func(s *infrav1.VCenterMachineSpec) { s.Network[0].Nameservers = []string{"dns.example.com"} },
			"spec.network[0].nameservers[0]", "must be an IP address"},
		{"routes, MTU and search domains", func(s *infrav1.VCenterMachineSpec) {
			s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"}
			s.Network[0].NetworkDeviceOptions = infrav1.NetworkDeviceOptions{MTU: ptr.To[int32](1400), SearchDomains: []string{"corp.example.com"},
				Routes: []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](10)}, {To: "fd20::/48", Via: "fe80::1"}}}
		}, "", ""},
		{"routes and search domains with cloudbase-init", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].NetworkDeviceOptions = infrav1.NetworkDeviceOptions{SearchDomains: []string{"corp.example.com"},
				Routes: []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](10)}}}
		}, "", ""},
		{"route next hop outside the subnet", func(s *infrav1.VCenterMachineSpec) {
			s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"}
			s.Network[0].Routes = []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.9.1"}}
		}, "spec.network[0].routes[0].via", "is not in the subnet of any static IPv4 address"},
		{"route with host bits (CEL)", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].Routes = []infrav1.NetworkRoute{{To: "10.20.0.1/16", Via: "10.0.0.254"}}
		}, "spec.network[0].routes[0].to", "no host bits set"},
		{"route across families (CEL)", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].Routes = []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "fd00::1"}}
		}, "spec.network[0].routes[0]", "via must be of the address family of to"},
		{"route metric (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].Routes = []infrav1.NetworkRoute{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](10000)}}
		}, "spec.network[0].routes[0].metric", "less than or equal to 9999"},
		{"MTU (schema)", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MTU = ptr.To[int32](9216) },
			"spec.network[0].mtu", "less than or equal to 9000"},
		{"search domain (schema)", func(s *infrav1.VCenterMachineSpec) { s.Network[0].SearchDomains = []string{"Corp_Example"} },
			"spec.network[0].searchDomains[0]", "should match"},
		{"linked clone disk (CEL)", func(s *infrav1.VCenterMachineSpec) {
			s.CloneMode, s.Snapshot, s.DiskGiB = infrav1.LinkedClone, "base", 80
		}, "spec", "linkedClone cannot grow the disk"},
		{"data disks", func(s *infrav1.VCenterMachineSpec) {
			s.DataDisks = []infrav1.VCenterDataDisk{{Name: "containerd", SizeGiB: 100}, {Name: "logs", SizeGiB: 5, Provisioning: infrav1.DiskEagerZeroedThick}}
		}, "", ""},
		{"15 data disks (schema)", func(s *infrav1.VCenterMachineSpec) {
			for i := range 15 {
				s.DataDisks = append(s.DataDisks, infrav1.VCenterDataDisk{Name: infrav1.DataDiskName(fmt.Sprintf("d%d", i)), SizeGiB: 1})
			}
		}, "spec.dataDisks", "must have at most 14 items"},
		{"data disk names repeat (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.DataDisks = []infrav1.VCenterDataDisk{{Name: "data", SizeGiB: 1}, {Name: "data", SizeGiB: 2}}
		}, "spec.dataDisks[1]", "Duplicate value"},
		{"data disk name (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.DataDisks = []infrav1.VCenterDataDisk{{Name: "Data_1", SizeGiB: 1}}
		}, "spec.dataDisks[0].name", "should match"},
		{"data disk size (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.DataDisks = []infrav1.VCenterDataDisk{{Name: "data", SizeGiB: 0}}
		}, "spec.dataDisks[0].sizeGiB", "greater than or equal to 1"},
		{"data disk provisioning (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.DataDisks = []infrav1.VCenterDataDisk{{Name: "data", SizeGiB: 1, Provisioning: "Sparse"}}
		}, "spec.dataDisks[0].provisioning", "Unsupported value"},
		{"tags", func(s *infrav1.VCenterMachineSpec) {
			s.Tags = []infrav1.VCenterTag{{Category: "backup", Name: "daily"}, {Category: "backup", Name: "offsite"}, {Category: "tier", Name: "daily"}}
		}, "", ""},
		{"17 tags (schema)", func(s *infrav1.VCenterMachineSpec) {
			for i := range 17 {
				s.Tags = append(s.Tags, infrav1.VCenterTag{Category: "c", Name: fmt.Sprintf("t%d", i)})
			}
		}, "spec.tags", "must have at most 16 items"},
		{"tag repeats (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.Tags = []infrav1.VCenterTag{{Category: "backup", Name: "daily"}, {Category: "backup", Name: "daily"}}
		}, "spec.tags[1]", "Duplicate value"},
		{"tag without category (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.Tags = []infrav1.VCenterTag{{Name: "daily"}}
		}, "spec.tags[0].category", "at least 1 chars long"},
		{"tag name length (schema)", func(s *infrav1.VCenterMachineSpec) {
			s.Tags = []infrav1.VCenterTag{{Category: "backup", Name: strings.Repeat("d", 257)}}
		}, "spec.tags[0].name", "may not be more than 256 bytes"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := machine(fmt.Sprintf("m%d", i), tc.mutate)
			err := k8s.Create(context.Background(), m)
			if tc.field != "" {
				expectInvalid(g, err, tc.field, tc.msg)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			// The response carries the stored, defaulted object.
			g.Expect(m.Spec.CloneMode).To(Equal(infrav1.FullClone))
			g.Expect(m.Spec.OS).To(Equal(infrav1.OSWindows))
			for _, d := range m.Spec.DataDisks {
				g.Expect(d.Provisioning).NotTo(BeEmpty())
			}
			if m.Spec.PowerOffMode == infrav1.PowerOffTrySoft {
				g.Expect(m.Spec.GuestSoftPowerOffTimeout).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}), "only the webhook sets it")
			} else {
				g.Expect(m.Spec.PowerOffMode).To(Equal(infrav1.PowerOffHard))
				g.Expect(m.Spec.GuestSoftPowerOffTimeout).To(BeNil())
			}
		})
	}
}

func TestMachineSpecIsImmutable(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	m := machine("immutable", func(*infrav1.VCenterMachineSpec) {})
	g.Expect(k8s.Create(ctx, m)).To(Succeed())

	// The provider sets providerID once, with metadata changes.
	m.Spec.ProviderID = "vsphere://4217a3c2-0000-0000-0000-000000000001"
	m.Finalizers = []string{"infrastructure.cluster.x-k8s.io/vcentermachine"}
	g.Expect(k8s.Update(ctx, m)).To(Succeed())

	changed := m.DeepCopy()
	changed.Spec.ProviderID = "vsphere://other"
	expectInvalid(g, k8s.Update(ctx, changed), "spec.providerID", "field is immutable once set")

	changed = m.DeepCopy()
	changed.Spec.DataDisks = append(changed.Spec.DataDisks, infrav1.VCenterDataDisk{Name: "more", SizeGiB: 10})
	expectInvalid(g, k8s.Update(ctx, changed), "spec.dataDisks", "field is immutable")

	changed = m.DeepCopy()
	changed.Spec.Tags = []infrav1.VCenterTag{{Category: "backup", Name: "daily"}}
	expectInvalid(g, k8s.Update(ctx, changed), "spec.tags", "field is immutable")

	changed = m.DeepCopy()
	changed.Spec.NumCPUs = 8
	expectInvalid(g, k8s.Update(ctx, changed), "spec.numCPUs",
		"spec.numCPUs: Invalid value: field is immutable: create a new VCenterMachineTemplate and roll out the MachineDeployment")

	m.Finalizers = nil
	g.Expect(k8s.Update(ctx, m)).To(Succeed(), "metadata stays mutable")
}

func machineTemplate(name string) *infrav1.VCenterMachineTemplate {
	tpl := &infrav1.VCenterMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	tpl.Spec.Template.Spec = machine("", func(*infrav1.VCenterMachineSpec) {}).Spec
	return tpl
}

func TestMachineTemplate(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	tpl := machineTemplate("win")
	tpl.Spec.Template.Spec.PowerOffMode = infrav1.PowerOffTrySoft
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	g.Expect(tpl.Spec.Template.Spec.GuestSoftPowerOffTimeout).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}), "the template spec is defaulted")

	// Metadata may change, and leaving out defaults is no change.
	tpl.Labels = map[string]string{"team": "a"}
	tpl.Spec.Template.Spec.GuestSoftPowerOffTimeout = nil
	tpl.Spec.Template.Spec.OS = ""
	g.Expect(k8s.Update(ctx, tpl)).To(Succeed())

	tpl.Spec.Template.Spec.MemoryMiB = 16384
	expectInvalid(g, k8s.Update(ctx, tpl), "spec.template.spec.memoryMiB",
		"VCenterMachineTemplate spec is immutable; create a new template and point the MachineDeployment")

	bad := machineTemplate("bad")
	bad.Spec.Template.Spec.ProviderID = "vsphere://42"
	bad.Spec.Template.Spec.Network[0].Gateway4 = "192.168.0.1"
	err := k8s.Create(ctx, bad)
	expectInvalid(g, err, "spec.template.spec.providerID", "a template must not have one")
	expectInvalid(g, err, "spec.template.spec.network[0].gateway4", "not in the subnet")
}

func TestClusterAdmission(t *testing.T) {
	apiServer(t)
	cases := []struct {
		name       string
		mutate     func(*infrav1.VCenterClusterSpec)
		field, msg string
	}{
		{"thumbprint", func(*infrav1.VCenterClusterSpec) {}, "", ""},
		{"server with credentials", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://admin:pw@vc.example.com" },
			"spec.server", "must not carry credentials"},
		{"server with query", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc.example.com?x=1" },
			"spec.server", "must not have a query or fragment"},
		{"ca bundle not PEM", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint, s.CABundle = "", []byte("not a certificate") },
			"spec.caBundle", "at least one PEM-encoded x509 certificate"},
		{"short thumbprint (CRD)", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = "AB:CD" }, "spec.thumbprint", "should match"},
		{"duplicate failure domain (CRD)", func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a"}, {Name: "a"}}
		}, "spec.failureDomains[1]", "Duplicate value"},
		{"failure domain with networks, hostGroup, zone and region", func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a", Placement: infrav1.Placement{Datastore: "ds"}, Networks: []string{"pg-a"},
				HostGroup: &infrav1.VCenterHostGroup{Name: "hosts-a", Mode: infrav1.HostGroupMust},
				Zone:      &infrav1.VCenterTag{Category: "k8s-zone", Name: "a"}, Region: &infrav1.VCenterTag{Category: "k8s-region", Name: "west"}}}
		}, "", ""},
		{"zone without region (CRD)", func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a", Placement: infrav1.Placement{Datastore: "ds"}, Zone: &infrav1.VCenterTag{Category: "k8s-zone", Name: "a"}}}
		}, "spec.failureDomains[0]", "set both zone and region, or neither"},
		{"bad host group mode (CRD)", func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a", Placement: infrav1.Placement{Datastore: "ds"}, HostGroup: &infrav1.VCenterHostGroup{Name: "h", Mode: "Always"}}}
		}, "spec.failureDomains[0].hostGroup.mode", "Unsupported value"},
		{"empty network name (CRD)", func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a", Placement: infrav1.Placement{Datastore: "ds"}, Networks: []string{""}}}
		}, "spec.failureDomains[0].networks[0]", "at least 1 chars long"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := k8s.Create(context.Background(), cluster(fmt.Sprintf("c%d", i), tc.mutate))
			if tc.field != "" {
				expectInvalid(g, err, tc.field, tc.msg)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

func TestClusterAndTemplateUpdate(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	c := cluster("update", func(*infrav1.VCenterClusterSpec) {})
	g.Expect(k8s.Create(ctx, c)).To(Succeed())

	c.Spec.Thumbprint = strings.Repeat("cd:", 31) + "cd"
	g.Expect(k8s.Update(ctx, c)).To(Succeed(), "a renewed certificate may be trusted")

	c.Spec.Server = "https://other.example.com"
	expectInvalid(g, k8s.Update(ctx, c), "spec.server", "field is immutable: the cluster's VMs live there")

	tpl := &infrav1.VCenterClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "class", Namespace: "default"}}
	tpl.Spec.Template.Spec = cluster("", func(*infrav1.VCenterClusterSpec) {}).Spec
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	tpl.Spec.Template.Spec.Datacenter = "dc2"
	expectInvalid(g, k8s.Update(ctx, tpl), "spec.template.spec.datacenter", "VCenterClusterTemplate spec is immutable")

	bad := &infrav1.VCenterClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}}
	bad.Spec.Template.Spec = cluster("", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://u@vc" }).Spec
	expectInvalid(g, k8s.Create(ctx, bad), "spec.template.spec.server", "must not carry credentials")
}
