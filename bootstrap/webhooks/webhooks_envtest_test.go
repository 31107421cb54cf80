package webhooks_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/internal/test/envtest"
)

var (
	k8s      client.Client
	warnings = &warningRecorder{}
)

// warningRecorder keeps the API server's warnings (admission.Warnings) for the running test.
type warningRecorder struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// take returns the warnings received since the last call.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	texts := w.texts
	w.texts = nil
	return texts
}

// TestMain serves the production webhooks (setup.Webhooks) to a real kube-apiserver that has the
// generated webhook configurations installed, so CRD schema, CEL and webhooks act together.
// With -short, or when fuzzing (each fuzz worker runs TestMain), no API server is started and the
// admission tests skip.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || flag.Lookup("test.fuzz").Value.String() != "" {
		os.Exit(m.Run())
	}
	env, err := envtest.Start(filepath.Join(envtest.RepoRoot(), "bootstrap", "config", "webhook"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := serve(env, m)
	_ = env.Stop()
	os.Exit(code)
}

func serve(env *envtest.Environment, m *testing.M) int {
	cancel, err := env.ServeWebhooks(setup.Scheme(), setup.Webhooks)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cancel()
	// A direct client (not the manager's cache) that records warnings.
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandlerWithContext = warnings
	if k8s, err = client.New(cfg, client.Options{Scheme: setup.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// apiServer skips t when TestMain started no API server.
func apiServer(t *testing.T) Gomega {
	t.Helper()
	if k8s == nil {
		t.Skip("no API server (-short or fuzzing)")
	}
	return NewWithT(t)
}

func config(name string, mutate func(*bootstrapv1.WindowsConfigSpec)) *bootstrapv1.WindowsConfig {
	c := &bootstrapv1.WindowsConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	mutate(&c.Spec)
	return c
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

func downloads(kubelet bootstrapv1.Download) func(*bootstrapv1.WindowsConfigSpec) {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload, Kubelet: &kubelet,
			Kubeadm: &bootstrapv1.Download{URL: "https://dl.example.com/kubeadm.exe", SHA256: sha}}
	}
}

var sha = strings.Repeat("a", 64)

func TestAdmission(t *testing.T) {
	apiServer(t)
	cases := []struct {
		name   string
		mutate func(*bootstrapv1.WindowsConfigSpec)
		// field and msg of the expected rejection; "" = accepted. (CRD) and (CEL) mark rules
		// the API server enforces before the webhook sees the object.
		field, msg string
	}{
		{"empty spec", func(*bootstrapv1.WindowsConfigSpec) {}, "", ""},
		{"full", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Format = bootstrapv1.FormatPowerShell
			s.NodeRegistration.Labels = map[string]string{"node.kubernetes.io/windows-build": "10.0.26100", "kubernetes.io/os": "windows"}
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{}
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "max-pods", Value: "60"}}
			s.Files = []bootstrapv1.File{{Path: `C:\k\a.txt`, Content: ptr.To("a")}, {Path: "C:/k/b.txt", ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "k"}}}}
			s.Users = []bootstrapv1.User{{Name: "capi", Groups: []string{"Administrators"}, SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA op"}}}
			s.Proxy = bootstrapv1.Proxy{HTTPProxy: "http://proxy:3128", NoProxy: []string{".svc", "10.0.0.0/8"}}
			downloads(bootstrapv1.Download{URL: "https://dl.example.com/kubelet.exe", SHA256: sha})(s)
		}, "", ""},
		{"bad format (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Format = "ignition" }, "spec.format", `Unsupported value: "ignition"`},
		{"relative path", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `etc\a.txt`, Content: ptr.To("a")}}
		}, "spec.files[0].path", "must be an absolute Windows path"},
		{"UNC path", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `\\srv\share\a`, Content: ptr.To("a")}}
		}, "spec.files[0].path", "UNC and device paths"},
		{"reserved name", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\nul.txt`, Content: ptr.To("a")}}
		}, "spec.files[0].path", "reserved Windows device name"},
		{"duplicate path (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\A.txt`, Content: ptr.To("a")}, {Path: `c:/k/a.TXT`, Content: ptr.To("b")}}
		}, "spec", "each path may appear only once"},
		{"content and contentFrom (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\a`, Content: ptr.To("a"), ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "k"}}}}
		}, "spec.files[0]", "set exactly one of content and contentFrom"},
		{"bad base64", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\a`, Encoding: bootstrapv1.EncodingBase64, Content: ptr.To("%%%")}}
		}, "spec.files[0].content", "not valid base64"},
		{"bad secret key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\a`, ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "a/b"}}}}
		}, "spec.files[0].contentFrom.secret.key", "valid config key"},
		{"bad taint effect (CRD)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a", Effect: "Never"}}
		}, "spec.nodeRegistration.taints[0].effect", `Unsupported value: "Never"`},
		{"bad taint key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a b", Effect: "NoSchedule"}}
		}, "spec.nodeRegistration.taints[0].key", "name part must consist of"},
		{"duplicate taint", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a", Effect: "NoSchedule"}, {Key: "a", Value: "b", Effect: "NoSchedule"}}
		}, "spec.nodeRegistration.taints[1]", "same key and effect"},
		{"node-role label", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"node-role.kubernetes.io/worker": ""}
		}, "spec.nodeRegistration.labels[node-role.kubernetes.io/worker]", "NodeRestriction"},
		{"os label", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"kubernetes.io/os": "linux"}
		}, "spec.nodeRegistration.labels[kubernetes.io/os]", "is windows"},
		{"owned kubelet flag", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "register-with-taints", Value: "a:NoSchedule"}}
		}, "spec.nodeRegistration.kubeletExtraArgs[0].name", "from spec.nodeRegistration.taints"},
		{"kubelet flag no kubelet has", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "pod-infra-image", Value: "x"}}
		}, "spec.nodeRegistration.kubeletExtraArgs[0].name", "no Windows kubelet v1.31 to v1.37 has a flag --pod-infra-image"},
		{"kubelet flag value with quote", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "v", Value: `2" --x`}}
		}, "spec.nodeRegistration.kubeletExtraArgs[0].value", "double quotes"},
		{"download without sha256 (CRD)", downloads(bootstrapv1.Download{URL: "https://dl.example.com/kubelet.exe"}),
			"spec.binaries.kubelet.sha256", "should match"},
		{"download without URLs (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload}
		}, "spec.binaries", "source Download needs kubelet and kubeadm URLs"},
		{"URL with credentials", downloads(bootstrapv1.Download{URL: "https://u:p@dl.example.com/kubelet.exe", SHA256: sha}),
			"spec.binaries.kubelet.url", "must not carry credentials"},
		{"relative binaries directory (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Binaries.Directory = "k" },
			"spec.binaries.directory", "should match"},
		{"binaries directory with dot dot", func(s *bootstrapv1.WindowsConfigSpec) { s.Binaries.Directory = `C:\k\..\x` }, "spec.binaries.directory", ". or .."},
		{"flannel VNI (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.CNI = bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel, VXLANVNI: 5000}
		}, "spec.cni", "flannel on Windows requires vxlanVNI 4096"},
		{"blank command", func(s *bootstrapv1.WindowsConfigSpec) { s.PreJoinCommands = []string{"   "} }, "spec.preJoinCommands[0]", "must not be empty"},
		{"built-in user", func(s *bootstrapv1.WindowsConfigSpec) { s.Users = []bootstrapv1.User{{Name: "Guest"}} }, "spec.users[0].name", "built-in Windows account"},
		{"duplicate user", func(s *bootstrapv1.WindowsConfigSpec) { s.Users = []bootstrapv1.User{{Name: "capi"}, {Name: "Capi"}} }, "spec.users[1].name", "same as spec.users[0].name"},
		{"bad ssh key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Users = []bootstrapv1.User{{Name: "capi", SSHAuthorizedKeys: []string{"hello"}}}
		}, "spec.users[0].sshAuthorizedKeys[0]", "one public key line"},
		{"bad timezone (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Timezone = "UTC; rm" }, "spec.timezone", "should match"},
		{"blank timezone", func(s *bootstrapv1.WindowsConfigSpec) { s.Timezone = "   " }, "spec.timezone", "time zone"},
		{"proxy scheme (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.HTTPProxy = "socks5://p" }, "spec.proxy.httpProxy", "should match"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := config(fmt.Sprintf("c%d", i), tc.mutate)
			err := k8s.Create(context.Background(), c)
			if tc.field != "" {
				expectInvalid(g, err, tc.field, tc.msg)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			// The response carries the stored object: defaulted by the CRD and by the webhook
			// (containerd, cni and binaries are omitted when empty, so only the webhook fills them).
			g.Expect(c.Spec.Format).NotTo(BeEmpty())
			g.Expect(c.Spec.NodeRegistration.CRISocket).To(Equal(bootstrapv1.DefaultCRISocket))
			g.Expect(c.Spec.Containerd.PauseImage).To(Equal("registry.k8s.io/pause:3.10"))
			g.Expect(c.Spec.CNI).To(Equal(bootstrapv1.CNI{Plugin: bootstrapv1.CNICalico, VXLANVNI: 4096, VXLANPort: 4789}))
			g.Expect(c.Spec.Binaries.Directory).To(Equal(`C:\k`))
			g.Expect(c.Spec.DefenderExclusions).To(Equal(ptr.To(true)))
		})
	}
}

func TestConfigUpdateIsValidated(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	c := config("mutable", func(*bootstrapv1.WindowsConfigSpec) {})
	g.Expect(k8s.Create(ctx, c)).To(Succeed())

	c.Spec.NodeRegistration.Labels = map[string]string{"tier": "web"}
	g.Expect(k8s.Update(ctx, c)).To(Succeed(), "a WindowsConfig's spec may change")

	c.Spec.NodeRegistration.Labels = map[string]string{"node-role.kubernetes.io/worker": ""}
	expectInvalid(g, k8s.Update(ctx, c), "spec.nodeRegistration.labels[node-role.kubernetes.io/worker]", "NodeRestriction")
}

func TestPlainHTTPDownloadWarns(t *testing.T) {
	g := apiServer(t)
	warnings.take()
	c := config("http", downloads(bootstrapv1.Download{URL: "http://dl.example.com/kubelet.exe", SHA256: sha}))
	g.Expect(k8s.Create(context.Background(), c)).To(Succeed())
	g.Expect(warnings.take()).To(ConsistOf(ContainSubstring("spec.binaries.kubelet.url uses plain http")))
}

// TestKubeletFlagOlderKubeletsHadWarns: --pod-infra-container-image is admitted (the v1.31 to
// v1.34 kubelets have it) with a warning that the v1.35 to v1.37 kubelets lack it.
func TestKubeletFlagOlderKubeletsHadWarns(t *testing.T) {
	g := apiServer(t)
	warnings.take()
	c := config("pod-infra", func(s *bootstrapv1.WindowsConfigSpec) {
		s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "pod-infra-container-image", Value: "registry.k8s.io/pause:3.10"}}
	})
	g.Expect(k8s.Create(context.Background(), c)).To(Succeed())
	g.Expect(warnings.take()).To(ContainElement(ContainSubstring(
		"spec.nodeRegistration.kubeletExtraArgs[0].name: the v1.35 to v1.37 kubelets have no flag --pod-infra-container-image")))
}

func template(name string) *bootstrapv1.WindowsConfigTemplate {
	tpl := &bootstrapv1.WindowsConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	tpl.Spec.Template.Spec.NodeRegistration.Labels = map[string]string{"tier": "web"}
	return tpl
}

func TestTemplateSpecIsImmutable(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	tpl := template("win")
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	g.Expect(tpl.Spec.Template.Spec.Binaries.Directory).To(Equal(`C:\k`), "the template spec is defaulted")

	// Metadata may change; re-sending the same spec is fine, and so is leaving out defaults.
	tpl.Labels = map[string]string{"team": "a"}
	g.Expect(k8s.Update(ctx, tpl)).To(Succeed())
	tpl.Spec.Template.Spec.Binaries = bootstrapv1.Binaries{}
	tpl.Spec.Template.Spec.Format = ""
	g.Expect(k8s.Update(ctx, tpl)).To(Succeed())

	tpl.Spec.Template.Spec.NodeRegistration.Labels["tier"] = "api"
	expectInvalid(g, k8s.Update(ctx, tpl), "spec.template.spec", "WindowsConfigTemplate spec is immutable; create a new template")
}

func TestTemplateSpecIsValidated(t *testing.T) {
	g := apiServer(t)
	bad := template("bad")
	bad.Spec.Template.Spec.Files = []bootstrapv1.File{{Path: "relative", Content: ptr.To("x")}}
	bad.Spec.Template.Spec.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "node-labels", Value: "a=b"}}
	err := k8s.Create(context.Background(), bad)
	expectInvalid(g, err, "spec.template.spec.files[0].path", "absolute Windows path")
	expectInvalid(g, err, "spec.template.spec.nodeRegistration.kubeletExtraArgs[0].name", "from spec.template.spec.nodeRegistration.labels")
}

// admissionCase is one spec sent to the API server: field and msg of the expected rejection;
// "" = accepted. (CRD) and (CEL) in a name mark rules the API server enforces before the webhook.
type admissionCase struct {
	name       string
	mutate     func(*bootstrapv1.WindowsConfigSpec)
	field, msg string
}

// runAdmission creates one WindowsConfig per case (named prefix + index).
func runAdmission(t *testing.T, prefix string, cases []admissionCase) {
	t.Helper()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := k8s.Create(context.Background(), config(fmt.Sprintf("%s%d", prefix, i), tc.mutate))
			if tc.field != "" {
				expectInvalid(g, err, tc.field, tc.msg)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}
