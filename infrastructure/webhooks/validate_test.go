package webhooks

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func validMachineSpec() infrav1.VCenterMachineSpec {
	return infrav1.VCenterMachineSpec{
		Template: "/dc1/vm/templates/win2022",
		Network:  []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}},
	}
}

// static sets device 0 to static IPv4 addresses and a gateway.
func static(gw string, addrs ...string) func(*infrav1.VCenterMachineSpec) {
	return func(s *infrav1.VCenterMachineSpec) {
		s.Network[0] = infrav1.NetworkDevice{NetworkName: "VM Network", IPAddrs: addrs, Gateway4: gw}
	}
}

func pool(group *string, kind, name string) corev1.TypedLocalObjectReference {
	return corev1.TypedLocalObjectReference{APIGroup: group, Kind: kind, Name: name}
}

var ipam = ptr.To("ipam.cluster.x-k8s.io")

// specCase is one row of an admission table: mutate a valid spec; field and msg of the expected
// error ("" = valid).
type specCase[S any] struct {
	name       string
	mutate     func(*S)
	field, msg string
}

// runSpecCases checks every row against check (defaulting, then validation).
func runSpecCases[S any](t *testing.T, cases []specCase[S], valid func() S, check func(S) field.ErrorList) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := valid()
			tc.mutate(&spec)
			errs := check(spec)
			if tc.field == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			expectOne(g, errs, tc.field, tc.msg)
		})
	}
}

// expectOne asserts that errs is exactly one error, at path, whose message contains msg.
func expectOne(g Gomega, errs field.ErrorList, path, msg string) {
	g.Expect(errs).To(HaveLen(1), "%v", errs)
	g.Expect(errs[0].Field).To(Equal(path))
	g.Expect(errs[0].Error()).To(ContainSubstring(msg))
}

func TestValidateMachineSpec(t *testing.T) {
	cases := []specCase[infrav1.VCenterMachineSpec]{
		{"dhcp", func(*infrav1.VCenterMachineSpec) {}, "", ""},
		{"guest operations on Windows", func(s *infrav1.VCenterMachineSpec) {
			s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"}
		}, "", ""},
		{"guest operations on Linux", func(s *infrav1.VCenterMachineSpec) {
			s.OS, s.GuestCredentialsRef = infrav1.OSLinux, &infrav1.SecretReference{Name: "admin"}
		}, "spec.guestCredentialsRef", "Linux machines bootstrap with cloud-init"},
		{"naming template", func(s *infrav1.VCenterMachineSpec) {
			s.NamingStrategy = &infrav1.NamingStrategy{Template: "{{ .cluster.name | trunc 8 }}-w{{ .random }}"}
		}, "", ""},
		{"naming template too long", func(s *infrav1.VCenterMachineSpec) {
			s.NamingStrategy = &infrav1.NamingStrategy{Template: "{{ .cluster.name }}-{{ .random }}"}
		}, "spec.namingStrategy.template", "a Windows computer name has at most 15"},
		{"naming template on Linux", func(s *infrav1.VCenterMachineSpec) {
			s.OS, s.NamingStrategy = infrav1.OSLinux, &infrav1.NamingStrategy{Template: "w{{ .random }}"}
		}, "spec.namingStrategy", "Linux machines keep the Machine's name"},
		{"static with gateway", static("10.0.0.1", "10.0.0.21/24"), "", ""},
		{"static without gateway", static("", "10.0.0.21/24"), "", ""},
		{"gateway in second subnet", static("192.168.1.1", "10.0.0.21/24", "192.168.1.5/24"), "", ""},
		{"gateway with dhcp4", func(s *infrav1.VCenterMachineSpec) { s.Network[0].Gateway4 = "10.0.0.1" }, "", ""},
		{"gateway with pool", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", Gateway4: "10.9.0.1",
				AddressesFromPools: []corev1.TypedLocalObjectReference{pool(ipam, "InClusterIPPool", "p")}}
		}, "", ""},
		{"gateway outside static subnet but pool present", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", Gateway4: "10.9.0.1", IPAddrs: []string{"10.0.0.21/24"},
				AddressesFromPools: []corev1.TypedLocalObjectReference{pool(ipam, "InClusterIPPool", "p")}}
		}, "", ""},
		{"ipv6 only with dhcp6", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", IPAddrs: []string{"fd00::5/64"}, Gateway6: "fd00::1"}
		}, "", ""},
		{"unicast MACs", func(s *infrav1.VCenterMachineSpec) {
			s.Network = []infrav1.NetworkDevice{{NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:AA:BB:01"}, {NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:aa:bb:02"}}
		}, "", ""},
		{"content library full clone", func(s *infrav1.VCenterMachineSpec) { s.ContentLibrary = "lib"; s.Template = "win2022" }, "", ""},
		{"linked clone with storage policy", func(s *infrav1.VCenterMachineSpec) {
			s.CloneMode, s.Snapshot, s.StoragePolicy = infrav1.LinkedClone, "base", "gold"
		}, "", ""},
		{"template name with dots", func(s *infrav1.VCenterMachineSpec) { s.Template = "win-2022.10..1" }, "", ""},

		{"gateway without IPv4 address", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", Gateway4: "10.0.0.1", DHCP6: true}
		}, "spec.network[0].gateway4", "the device has no IPv4 address"},
		{"gateway with only IPv6 addresses", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", Gateway4: "10.0.0.1", IPAddrs: []string{"fd00::5/64"}}
		}, "spec.network[0].gateway4", "the device has no IPv4 address"},
		{"gateway outside subnet", static("10.0.1.1", "10.0.0.21/24"), "spec.network[0].gateway4", "is not in the subnet of any static IPv4 address of the device (10.0.0.0/24)"},
		{"gateway outside /32", static("10.0.0.1", "10.0.0.21/32"), "spec.network[0].gateway4", "not in the subnet"},
		{"gateway is own address", static("10.0.0.21", "10.0.0.21/24"), "spec.network[0].gateway4", "is the device's own address 10.0.0.21/24"},
		{"gateway on second device", func(s *infrav1.VCenterMachineSpec) {
			s.Network = append(s.Network, infrav1.NetworkDevice{NetworkName: "b", IPAddrs: []string{"172.16.0.5/16"}, Gateway4: "172.17.0.1"})
		}, "spec.network[1].gateway4", "not in the subnet"},
		{"pool with dhcp4", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].AddressesFromPools = []corev1.TypedLocalObjectReference{pool(ipam, "InClusterIPPool", "p")}
		}, "spec.network[0].addressesFromPools", "cannot be combined with dhcp4"},
		{"pool without apiGroup", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", AddressesFromPools: []corev1.TypedLocalObjectReference{pool(nil, "InClusterIPPool", "p")}}
		}, "spec.network[0].addressesFromPools[0].apiGroup", "Required value: the pool's API group"},
		{"pool with empty apiGroup", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", AddressesFromPools: []corev1.TypedLocalObjectReference{
				pool(ipam, "InClusterIPPool", "p"), pool(ptr.To(""), "InClusterIPPool", "q")}}
		}, "spec.network[0].addressesFromPools[1].apiGroup", "API group"},
		{"pool without kind", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", AddressesFromPools: []corev1.TypedLocalObjectReference{pool(ipam, "", "p")}}
		}, "spec.network[0].addressesFromPools[0].kind", "the pool's kind"},
		{"pool without name", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", AddressesFromPools: []corev1.TypedLocalObjectReference{pool(ipam, "InClusterIPPool", "")}}
		}, "spec.network[0].addressesFromPools[0].name", "the pool's name"},
		{"multicast MAC", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MACAddr = "01:00:5e:00:00:01" },
			"spec.network[0].macAddr", "must be a unicast MAC address"},
		{"broadcast MAC", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MACAddr = "FF:FF:FF:FF:FF:FF" },
			"spec.network[0].macAddr", "unicast"},
		{"8-byte MAC", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MACAddr = "00:50:56:aa:bb:cc:dd:ee" },
			"spec.network[0].macAddr", "must be a 6-byte MAC address"},
		{"duplicate MAC", func(s *infrav1.VCenterMachineSpec) {
			s.Network = []infrav1.NetworkDevice{{NetworkName: "a", DHCP4: true, MACAddr: "00:50:56:aa:bb:01"},
				{NetworkName: "b", DHCP4: true}, {NetworkName: "c", DHCP4: true, MACAddr: "00:50:56:AA:BB:01"}}
		}, "spec.network[2].macAddr", "same as spec.network[0].macAddr"},
		{"template with ..", func(s *infrav1.VCenterMachineSpec) { s.Template = "/dc1/vm/../vm/win" },
			"spec.template", "must not contain .. segments"},
		{"template is ..", func(s *infrav1.VCenterMachineSpec) { s.Template = ".." }, "spec.template", ".. segments"},
		{"template ends with /", func(s *infrav1.VCenterMachineSpec) { s.Template = "/dc1/vm/templates/" },
			"spec.template", "must not end with /"},
		{"template glob (another tenant's VM)", func(s *infrav1.VCenterMachineSpec) { s.Template = "/dc1/vm/tenant-b/*" },
			"spec.template", "must not contain '*'"},
		{"template any depth", func(s *infrav1.VCenterMachineSpec) { s.Template = "/dc1/vm/.../db01" },
			"spec.template", "must not contain ... segments"},
		{"template character class", func(s *infrav1.VCenterMachineSpec) { s.Template = "win20[0-9][0-9]" },
			"spec.template", "must not contain '['"},
		{"folder pattern", func(s *infrav1.VCenterMachineSpec) { s.Placement.Folder = "/dc1/vm/team-?" },
			"spec.placement.folder", "must not contain '?'"},
		{"network pattern", func(s *infrav1.VCenterMachineSpec) { s.Network[0].NetworkName = "VM *" },
			"spec.network[0].networkName", "must not contain '*'"},
		{"content library linked clone", func(s *infrav1.VCenterMachineSpec) {
			s.ContentLibrary, s.CloneMode, s.Snapshot = "lib", infrav1.LinkedClone, "base"
		}, "spec.cloneMode", "content library items can only be full-cloned"},
	}
	runSpecCases(t, cases, validMachineSpec, func(s infrav1.VCenterMachineSpec) field.ErrorList {
		DefaultMachineSpec(&s)
		return ValidateMachineSpec(s, field.NewPath("spec"))
	})
}

func TestValidateMachineTemplateSpecForbidsProviderID(t *testing.T) {
	g := NewWithT(t)
	spec := validMachineSpec()
	spec.ProviderID = "vsphere://42"
	expectOne(g, ValidateMachineTemplateSpec(spec, field.NewPath("spec", "template", "spec")),
		"spec.template.spec.providerID", "a template must not have one")
}

func TestDefaultMachineSpec(t *testing.T) {
	g := NewWithT(t)
	spec := validMachineSpec()
	DefaultMachineSpec(&spec)
	g.Expect(spec.CloneMode).To(Equal(infrav1.FullClone))
	g.Expect(spec.OS).To(Equal(infrav1.OSWindows))
	g.Expect(spec.PowerOffMode).To(Equal(infrav1.PowerOffHard))
	g.Expect(spec.GuestSoftPowerOffTimeout).To(BeNil(), "only trySoft waits")

	spec = validMachineSpec()
	spec.PowerOffMode, spec.OS, spec.CloneMode = infrav1.PowerOffTrySoft, infrav1.OSLinux, infrav1.LinkedClone
	spec.DataDisks = []infrav1.VCenterDataDisk{{Name: "a", SizeGiB: 1}, {Name: "b", SizeGiB: 1, Provisioning: infrav1.DiskThick}}
	DefaultMachineSpec(&spec)
	g.Expect(spec.DataDisks[0].Provisioning).To(Equal(infrav1.DiskThin))
	g.Expect(spec.DataDisks[1].Provisioning).To(Equal(infrav1.DiskThick))
	g.Expect(spec.GuestSoftPowerOffTimeout).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}))
	g.Expect(spec.OS).To(Equal(infrav1.OSLinux))
	g.Expect(spec.CloneMode).To(Equal(infrav1.LinkedClone))

	spec.GuestSoftPowerOffTimeout = &metav1.Duration{Duration: time.Minute}
	before := *spec.DeepCopy()
	DefaultMachineSpec(&spec)
	g.Expect(spec).To(Equal(before), "defaulting is idempotent and keeps set values")
}

// testCA returns a PEM self-signed CA certificate.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vcenter-ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func validClusterSpec() infrav1.VCenterClusterSpec {
	return infrav1.VCenterClusterSpec{
		Server: "https://vcenter.example.com", Thumbprint: strings.Repeat("ab:", 31) + "AB",
		IdentityRef: infrav1.VCenterIdentityReference{Name: "vc"}, Datacenter: "dc1",
	}
}

func TestValidateClusterSpec(t *testing.T) {
	ca := testCA(t)
	fd := func(names ...string) func(*infrav1.VCenterClusterSpec) {
		return func(s *infrav1.VCenterClusterSpec) {
			for _, n := range names {
				s.FailureDomains = append(s.FailureDomains, infrav1.VCenterFailureDomain{Name: n})
			}
		}
	}
	zone, region := infrav1.VCenterTag{Category: "k8s-zone", Name: "a"}, infrav1.VCenterTag{Category: "k8s-region", Name: "west"}
	zoned := func(z, r *infrav1.VCenterTag) func(*infrav1.VCenterClusterSpec) {
		return func(s *infrav1.VCenterClusterSpec) {
			s.FailureDomains = append(s.FailureDomains, infrav1.VCenterFailureDomain{Name: "a", Zone: z, Region: r})
		}
	}
	cases := []specCase[infrav1.VCenterClusterSpec]{
		{"sha-256 thumbprint", func(*infrav1.VCenterClusterSpec) {}, "", ""},
		{"sha-1 thumbprint", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = strings.Repeat("0F:", 19) + "a0" }, "", ""},
		{"server with port and slash", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://10.0.0.5:8443/" }, "", ""},
		{"ipv6 server", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://[fd00::5]" }, "", ""},
		{"ca bundle", func(s *infrav1.VCenterClusterSpec) {
			s.Thumbprint, s.CABundle = "", append(append([]byte{}, ca...), ca...)
		}, "", ""},
		{"insecure", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint, s.Insecure = "", true }, "", ""},
		{"failure domains", fd("a", "b"), "", ""},

		{"http server", func(s *infrav1.VCenterClusterSpec) { s.Server = "http://vc" }, "spec.server", "must use https"},
		{"server with user info", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://admin:pw@vc" }, "spec.server", "must not carry credentials"},
		{"server with query", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc?x=1" }, "spec.server", "must not have a query or fragment"},
		{"server with empty query", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc?" }, "spec.server", "query or fragment"},
		{"server with fragment", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc#" }, "spec.server", "query or fragment"},
		{"server without host", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://:443" }, "spec.server", "must name a host"},
		{"server with path", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc/sdk" }, "spec.server", "must not have a path"},
		{"server with bad port", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc:70000" }, "spec.server", "port must be between"},
		{"unparsable server", func(s *infrav1.VCenterClusterSpec) { s.Server = "https://vc:x" }, "spec.server", "must be a URL"},
		{"short thumbprint", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = "AB:CD" }, "spec.thumbprint", "SHA-256 (32 bytes) or SHA-1 (20 bytes)"},
		{"thumbprint without colons", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = strings.Repeat("ab", 32) }, "spec.thumbprint", "colon-separated"},
		{"thumbprint misplaced colon", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = "aba:b" + strings.Repeat(":ab", 30) }, "spec.thumbprint", "must separate every hex pair with a colon"},
		{"thumbprint not hex", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint = strings.Repeat("zz:", 31) + "zz" }, "spec.thumbprint", "hex"},
		{"ca bundle not PEM", func(s *infrav1.VCenterClusterSpec) { s.Thumbprint, s.CABundle = "", []byte("hello") }, "spec.caBundle", "at least one PEM-encoded x509 certificate"},
		{"ca bundle with a key", func(s *infrav1.VCenterClusterSpec) {
			s.CABundle = append(append([]byte{}, ca...), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1}})...)
		}, "spec.caBundle", "PEM block 2 is a EC PRIVATE KEY"},
		{"ca bundle with a broken certificate", func(s *infrav1.VCenterClusterSpec) {
			s.CABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})
		}, "spec.caBundle", "PEM block 1 is not an x509 certificate"},
		{"duplicate failure domain", fd("a", "b", "a"), "spec.failureDomains[2].name", "same as spec.failureDomains[0].name"},
		{"zone and region", zoned(&zone, &region), "", ""},
		{"zone without region", zoned(&zone, nil), "spec.failureDomains[0].region", "set both zone and region, or neither"},
		{"region without zone", zoned(nil, &region), "spec.failureDomains[0].zone", "set both zone and region, or neither"},
		{"zone and region of one category", zoned(&zone, &infrav1.VCenterTag{Category: "k8s-zone", Name: "west"}),
			"spec.failureDomains[0].region.category", "must differ from the zone's category"},
	}
	runSpecCases(t, cases, validClusterSpec, func(s infrav1.VCenterClusterSpec) field.ErrorList {
		return ValidateClusterSpec(s, field.NewPath("spec"))
	})
}

// causes returns the fields of an Invalid error's causes.
func causes(g Gomega, err error) []string {
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	var fields []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	return fields
}

func TestMachineUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := &VCenterMachine{}
	old := &infrav1.VCenterMachine{Spec: validMachineSpec()}

	// Leaving out or spelling out defaults is no change; setting providerID once is allowed.
	m := old.DeepCopy()
	DefaultMachineSpec(&m.Spec)
	m.Spec.ProviderID = "vsphere://42"
	_, err := w.ValidateUpdate(ctx, old, m)
	g.Expect(err).NotTo(HaveOccurred())

	changed := m.DeepCopy()
	changed.Spec.ProviderID = "vsphere://43"
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.providerID"}))
	g.Expect(err.Error()).To(ContainSubstring("field is immutable once set"))

	changed = m.DeepCopy()
	changed.Spec.ProviderID = ""
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.providerID"}), "providerID cannot be cleared")

	changed = m.DeepCopy()
	changed.Spec.NumCPUs = 4
	changed.Spec.Network[0].NetworkName = "other"
	changed.Spec.Placement.Folder = "f"
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.network[0].networkName", "spec.numCPUs", "spec.placement"}))
	g.Expect(err.Error()).To(ContainSubstring("spec.numCPUs: Invalid value: field is immutable: create a new VCenterMachineTemplate and roll out the MachineDeployment"))

	changed = m.DeepCopy()
	changed.Spec.Network = append(changed.Spec.Network, infrav1.NetworkDevice{NetworkName: "b", DHCP4: true})
	_, err = w.ValidateUpdate(ctx, m, changed)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.network"}))
}

// TestLogRequestUpdate: a log request id becomes part of file names in the guest; a bad one is
// refused when set, a stored one does not block other metadata updates.
func TestLogRequestUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	old := &infrav1.VCenterMachine{Spec: validMachineSpec()}
	asked := old.DeepCopy()
	asked.Annotations = map[string]string{infrav1.CollectLogsAnnotation: "r1764000000-2"}
	_, err := (&VCenterMachine{}).ValidateUpdate(ctx, old, asked)
	g.Expect(err).NotTo(HaveOccurred())
	for _, bad := range []string{"", "../x", "a;b", "R1", strings.Repeat("a", 41), "-a"} {
		m := old.DeepCopy()
		m.Annotations = map[string]string{infrav1.CollectLogsAnnotation: bad}
		_, err := (&VCenterMachine{}).ValidateUpdate(ctx, old, m)
		g.Expect(causes(g, err)).To(Equal([]string{"metadata.annotations[infrastructure.cluster.x-k8s.io/collect-logs]"}), bad)
		hv := &infrav1.HyperVMachine{ObjectMeta: m.ObjectMeta}
		_, err = (&HyperVMachine{}).ValidateUpdate(ctx, &infrav1.HyperVMachine{}, hv)
		g.Expect(err).To(MatchError(ContainSubstring("a log request id is 1 to 40")), bad)
		// Stored before: another metadata change goes through.
		later := m.DeepCopy()
		later.Finalizers = nil
		_, err = (&VCenterMachine{}).ValidateUpdate(ctx, m, later)
		g.Expect(err).NotTo(HaveOccurred())
	}
}

func TestTemplateUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	old := &infrav1.VCenterMachineTemplate{}
	old.Spec.Template.Spec = validMachineSpec()
	tpl := old.DeepCopy()
	DefaultMachineSpec(&tpl.Spec.Template.Spec)
	tpl.Labels = map[string]string{"a": "b"}
	_, err := (&VCenterMachineTemplate{}).ValidateUpdate(ctx, old, tpl)
	g.Expect(err).NotTo(HaveOccurred(), "defaults and metadata are no spec change")

	tpl.Spec.Template.Spec.MemoryMiB = 8192
	_, err = (&VCenterMachineTemplate{}).ValidateUpdate(ctx, old, tpl)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.template.spec.memoryMiB"}))
	g.Expect(err.Error()).To(ContainSubstring("create a new template and point the MachineDeployment"))

	oldCT := &infrav1.VCenterClusterTemplate{}
	oldCT.Spec.Template.Spec = validClusterSpec()
	ct := oldCT.DeepCopy()
	ct.Spec.Template.Spec.IdentityRef.Name = "other"
	_, err = (&VCenterClusterTemplate{}).ValidateUpdate(ctx, oldCT, ct)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.template.spec.identityRef.name"}))
	g.Expect(err.Error()).To(ContainSubstring("point the ClusterClass at it"))
}

func TestClusterUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := &VCenterCluster{}
	old := &infrav1.VCenterCluster{Spec: validClusterSpec()}
	c := old.DeepCopy()
	c.Spec.Thumbprint = strings.Repeat("cd:", 31) + "cd"
	c.Spec.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a"}}
	_, err := w.ValidateUpdate(ctx, old, c)
	g.Expect(err).NotTo(HaveOccurred(), "certificate and failure domains may change")

	c.Spec.Server, c.Spec.Datacenter = "https://other.example.com", "dc2"
	_, err = w.ValidateUpdate(ctx, old, c)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.server", "spec.datacenter"}))
	g.Expect(err.Error()).To(ContainSubstring("field is immutable: the cluster's VMs live there"))

	// A failure domain's zone and region cannot change; a new domain may bring its own.
	zone, region := &infrav1.VCenterTag{Category: "k8s-zone", Name: "a"}, &infrav1.VCenterTag{Category: "k8s-region", Name: "west"}
	old = &infrav1.VCenterCluster{Spec: validClusterSpec()}
	old.Spec.FailureDomains = []infrav1.VCenterFailureDomain{{Name: "a", Zone: zone, Region: region}}
	c = old.DeepCopy()
	c.Spec.FailureDomains = append(c.Spec.FailureDomains, infrav1.VCenterFailureDomain{Name: "b",
		Zone: &infrav1.VCenterTag{Category: "k8s-zone", Name: "b"}, Region: region, HostGroup: &infrav1.VCenterHostGroup{Name: "hosts-b"}})
	_, err = w.ValidateUpdate(ctx, old, c)
	g.Expect(err).NotTo(HaveOccurred())
	c.Spec.FailureDomains[0].Zone = &infrav1.VCenterTag{Category: "k8s-zone", Name: "moved"}
	_, err = w.ValidateUpdate(ctx, old, c)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.failureDomains[0].zone"}))
	g.Expect(err.Error()).To(ContainSubstring("field is immutable: the domain's VMs carry its tag"))
	c.Spec.FailureDomains[0].Zone, c.Spec.FailureDomains[0].Region = nil, nil
	_, err = w.ValidateUpdate(ctx, old, c)
	g.Expect(causes(g, err)).To(Equal([]string{"spec.failureDomains[0].zone", "spec.failureDomains[0].region"}))

	// An unchanged spec is not validated again (objects stored before a rule was added).
	legacy := &infrav1.VCenterCluster{Spec: validClusterSpec()}
	legacy.Spec.Server = "https://u@vc"
	_, err = w.ValidateUpdate(ctx, legacy, legacy.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
}
