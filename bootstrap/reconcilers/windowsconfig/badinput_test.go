package windowsconfig_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/webhooks"
	"github.com/capwin/capwin/internal/test/badinput"
)

type spec = bootstrapv1.WindowsConfigSpec

func file(path string) func(*spec) {
	return func(s *spec) { s.Files = []bootstrapv1.File{{Path: path, Content: ptr.To("x")}} }
}

func label(k, v string) func(*spec) {
	return func(s *spec) { s.NodeRegistration.Labels = map[string]string{k: v} }
}

func kubeletArg(name, value string) func(*spec) {
	return func(s *spec) { s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: name, Value: value}} }
}

// badConfigRows break rules of webhooks.ValidateSpec that the schema lets by; field is the bad
// field below spec.
var badConfigRows = []struct {
	name   string
	mutate func(*spec)
	field  string
}{
	{"relative file path", file(`k\a.txt`), "files[0].path"},
	{"containerd root on no data disk", func(s *spec) { s.Containerd.Root = `E:\containerd` }, "containerd.root"},
	{"reserved device name", file(`C:\k\nul`), "files[0].path"},
	{"file path with ..", file(`C:\k\..\Windows\x`), "files[0].path"},
	{"content not base64", func(s *spec) {
		s.Files = []bootstrapv1.File{{Path: `C:\k\a`, Encoding: bootstrapv1.EncodingBase64, Content: ptr.To("!!!")}}
	}, "files[0].content"},
	{"contentFrom a bad Secret name", func(s *spec) {
		s.Files = []bootstrapv1.File{{Path: `C:\k\a`, ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "Bad_Name", Key: "k"}}}}
	}, "files[0].contentFrom.secret.name"},
	{"node-role label", label("node-role.kubernetes.io/worker", ""), "nodeRegistration.labels[node-role.kubernetes.io/worker]"},
	{"Linux os label", label("kubernetes.io/os", "linux"), "nodeRegistration.labels[kubernetes.io/os]"},
	{"taint twice", func(s *spec) {
		s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a", Effect: "NoSchedule"}, {Key: "a", Value: "b", Effect: "NoSchedule"}}
	}, "nodeRegistration.taints[1]"},
	{"kubelet flag capwin sets", kubeletArg("node-labels", "a=b"), "nodeRegistration.kubeletExtraArgs[0].name"},
	{"kubelet flag no kubelet has", kubeletArg("pod-infra-image", "x"), "nodeRegistration.kubeletExtraArgs[0].name"},
	{"unknown kubelet configuration field", func(s *spec) {
		s.KubeletConfiguration = &runtime.RawExtension{Raw: []byte(`{"maxPods": 60, "fooBar": 1}`)}
	}, "kubeletConfiguration.fooBar"},
	{"kubelet configuration Windows lacks", func(s *spec) {
		s.KubeletConfiguration = &runtime.RawExtension{Raw: []byte(`{"cgroupDriver": "systemd"}`)}
	}, "kubeletConfiguration.cgroupDriver"},
	{"kubelet flag value with a quote", kubeletArg("v", `2" --x`), "nodeRegistration.kubeletExtraArgs[0].value"},
	{"download URL with credentials", func(s *spec) {
		sha := strings.Repeat("a", 64)
		s.Binaries.Source = bootstrapv1.BinariesDownload
		s.Binaries.Kubelet = &bootstrapv1.Download{URL: "https://u:p@dl.example.com/kubelet.exe", SHA256: sha}
		s.Binaries.Kubeadm = &bootstrapv1.Download{URL: "https://dl.example.com/kubeadm.exe", SHA256: sha}
	}, "binaries.kubelet.url"},
	{"binaries directory with ..", func(s *spec) { s.Binaries.Directory = `C:\k\..\Windows` }, "binaries.directory"},
	{"proxy without a host", func(s *spec) { s.Proxy.HTTPSProxy = "http:///proxy" }, "proxy.httpsProxy"},
	{"built-in user", func(s *spec) { s.Users = []bootstrapv1.User{{Name: "Guest"}} }, "users[0].name"},
	{"SSH key that is no key", func(s *spec) {
		s.Users = []bootstrapv1.User{{Name: "capi", SSHAuthorizedKeys: []string{"not-a-key"}}}
	}, "users[0].sshAuthorizedKeys[0]"},
	{"user twice", func(s *spec) { s.Users = []bootstrapv1.User{{Name: "capi"}, {Name: "CAPI"}} }, "users[1].name"},
	{"empty command", func(s *spec) { s.PreJoinCommands = []string{"  "} }, "preJoinCommands[0]"},
	{"NTP server twice", func(s *spec) { s.NTP.Servers = []string{"pool.ntp.org", "POOL.ntp.org"} }, "ntp.servers[1]"},
	{"blank time zone", func(s *spec) { s.Timezone = " " }, "timezone"},
	{"registry port out of range", registry(bootstrapv1.Registry{Host: "registry.corp:70000"}), "containerd.registries[0].host"},
	{"inline CA that is no PEM", registry(bootstrapv1.Registry{Host: "docker.io", RegistryAccess: bootstrapv1.RegistryAccess{CA: &bootstrapv1.CABundle{Content: "not a certificate"}}}), "containerd.registries[0].ca.content"},
	{"OU outside the domain", func(s *spec) {
		s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: "corp.example.com", OrganizationalUnit: "OU=K8s,DC=other,DC=com",
			Credentials: &bootstrapv1.SecretName{Name: "join"}}
	}, "activeDirectory.organizationalUnit"},
	{"DNS server that is no IP", func(s *spec) {
		s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: "corp.example.com", DNSServers: []string{"dc1.corp"},
			Credentials: &bootstrapv1.SecretName{Name: "join"}}
	}, "activeDirectory.dnsServers[0]"},
	{"two credentials for one mirror host", func(s *spec) {
		mirror := func(secret string) []bootstrapv1.RegistryMirror {
			return []bootstrapv1.RegistryMirror{{URL: "https://mirror.corp", RegistryAccess: bootstrapv1.RegistryAccess{Credentials: &bootstrapv1.SecretName{Name: secret}}}}
		}
		s.Containerd.Registries = []bootstrapv1.Registry{{Host: "docker.io", Mirrors: mirror("a")}, {Host: "quay.io", Mirrors: mirror("b")}}
	}, "containerd.registries[1].mirrors[0].credentials.name"},
}

func registry(r bootstrapv1.Registry) func(*spec) {
	return func(s *spec) { s.Containerd.Registries = []bootstrapv1.Registry{r} }
}

// TestConfigTheWebhookWouldRejectIsRefused stores (this suite runs without webhooks) each row as
// a WindowsConfig, which is also what CAPI makes from a WindowsConfigTemplate with the spec. Both
// webhooks reject the spec; the reconciler refuses it and makes no bootstrap token and no data.
func TestConfigTheWebhookWouldRejectIsRefused(t *testing.T) {
	for _, tc := range badConfigRows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			o := readyCluster()
			tc.mutate(&o.spec)
			_, err := (&webhooks.WindowsConfig{}).ValidateCreate(ctx, &bootstrapv1.WindowsConfig{Spec: *o.spec.DeepCopy()})
			badinput.Rejects(g, err, "spec."+tc.field)
			_, err = (&webhooks.WindowsConfigTemplate{}).ValidateCreate(ctx, &bootstrapv1.WindowsConfigTemplate{
				Spec: bootstrapv1.WindowsConfigTemplateSpec{Template: bootstrapv1.WindowsConfigTemplateResource{Spec: *o.spec.DeepCopy()}}})
			badinput.Rejects(g, err, "spec.template.spec."+tc.field)

			f := newFixture(t, o)
			badinput.ExpectRefused(t, k8s, f.config, bootstrapv1.DataSecretAvailableCondition, "spec."+tc.field)
			g.Expect(f.config.Finalizers).To(BeEmpty(), "no bootstrap token was made")
			err = k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.config.Name}, &corev1.Secret{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no bootstrap data Secret: %v", err)
		})
	}
}
