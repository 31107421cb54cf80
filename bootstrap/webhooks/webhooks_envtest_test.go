package webhooks_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/test/envtest"
)

var k8s client.Client

// TestMain serves the production webhooks (setup.Webhooks) to a real kube-apiserver that has the
// generated webhook configurations installed, so CRD schema, CEL and webhooks act together.
func TestMain(m *testing.M) {
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
	opts := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  setup.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		}),
	})
	if err == nil {
		err = setup.Webhooks(mgr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	addr := net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // readiness probe only
		if err == nil {
			_ = conn.Close()
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "webhook server not ready:", err)
			return 1
		}
	}
	if k8s, err = client.New(env.Config, client.Options{Scheme: setup.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func config(name string, mutate func(*bootstrapv1.WindowsConfigSpec)) *bootstrapv1.WindowsConfig {
	c := &bootstrapv1.WindowsConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	mutate(&c.Spec)
	return c
}

func TestAdmission(t *testing.T) {
	sha := strings.Repeat("a", 64)
	cases := []struct {
		name   string
		mutate func(*bootstrapv1.WindowsConfigSpec)
		want   string // "" = accepted
	}{
		{"empty spec", func(*bootstrapv1.WindowsConfigSpec) {}, ""},
		{"full", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Format = bootstrapv1.FormatPowerShell
			s.NodeRegistration.Labels = map[string]string{"node.kubernetes.io/windows-build": "10.0.26100"}
			s.Files = []bootstrapv1.File{{Path: `C:\k\a.txt`, Content: ptr.To("a")}}
			s.Users = []bootstrapv1.User{{Name: "capi", Groups: []string{"Administrators"}}}
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload,
				Kubelet: &bootstrapv1.Download{URL: "https://dl.example.com/kubelet.exe", SHA256: sha},
				Kubeadm: &bootstrapv1.Download{URL: "https://dl.example.com/kubeadm.exe", SHA256: sha}}
		}, ""},
		{"bad format (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Format = "ignition" }, `spec.format: Unsupported value: "ignition"`},
		{"relative path", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `etc\a.txt`, Content: ptr.To("a")}}
		}, "spec.files[0].path: Invalid value: \"etc\\\\a.txt\": must be an absolute Windows path"},
		{"UNC path", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `\\srv\share\a`, Content: ptr.To("a")}}
		}, "UNC and device paths are not supported"},
		{"duplicate path (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\A.txt`, Content: ptr.To("a")}, {Path: `c:/k/a.TXT`, Content: ptr.To("b")}}
		}, "each path may appear only once"},
		{"content and contentFrom (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\a`, Content: ptr.To("a"), ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "s", Key: "k"}}}}
		}, "set exactly one of content and contentFrom"},
		{"bad base64", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: `C:\k\a`, Encoding: bootstrapv1.EncodingBase64, Content: ptr.To("%%%")}}
		}, "not valid base64"},
		{"bad taint effect (CRD)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a", Effect: "Never"}}
		}, `spec.nodeRegistration.taints[0].effect: Unsupported value: "Never"`},
		{"bad taint key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Taints = &[]bootstrapv1.Taint{{Key: "a b", Effect: "NoSchedule"}}
		}, "spec.nodeRegistration.taints[0].key"},
		{"node-role label", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.Labels = map[string]string{"node-role.kubernetes.io/worker": ""}
		}, "NodeRestriction"},
		{"owned kubelet flag", func(s *bootstrapv1.WindowsConfigSpec) {
			s.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "register-with-taints", Value: "a:NoSchedule"}}
		}, "use spec.nodeRegistration.taints"},
		{"download without sha256 (CRD)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload,
				Kubelet: &bootstrapv1.Download{URL: "https://dl.example.com/kubelet.exe"},
				Kubeadm: &bootstrapv1.Download{URL: "https://dl.example.com/kubeadm.exe", SHA256: sha}}
		}, "spec.binaries.kubelet.sha256"},
		{"download without URLs (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload}
		}, "source Download needs kubelet and kubeadm URLs"},
		{"URL with credentials", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Binaries = bootstrapv1.Binaries{Source: bootstrapv1.BinariesDownload,
				Kubelet: &bootstrapv1.Download{URL: "https://u:p@dl.example.com/kubelet.exe", SHA256: sha},
				Kubeadm: &bootstrapv1.Download{URL: "https://dl.example.com/kubeadm.exe", SHA256: sha}}
		}, "must not carry credentials"},
		{"flannel VNI (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.CNI = bootstrapv1.CNI{Plugin: bootstrapv1.CNIFlannel, VXLANVNI: 5000}
		}, "flannel on Windows requires vxlanVNI 4096"},
		{"blank command", func(s *bootstrapv1.WindowsConfigSpec) { s.PreJoinCommands = []string{"   "} }, "spec.preJoinCommands[0]"},
		{"builtin user", func(s *bootstrapv1.WindowsConfigSpec) { s.Users = []bootstrapv1.User{{Name: "Guest"}} }, "built-in Windows account"},
		{"bad ssh key", func(s *bootstrapv1.WindowsConfigSpec) {
			s.Users = []bootstrapv1.User{{Name: "capi", SSHAuthorizedKeys: []string{"hello"}}}
		}, "one public key line"},
		{"bad timezone (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Timezone = "UTC; rm" }, "spec.timezone"},
		{"proxy scheme (CRD)", func(s *bootstrapv1.WindowsConfigSpec) { s.Proxy.HTTPProxy = "socks5://p" }, "spec.proxy.httpProxy"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := config(fmt.Sprintf("c%d", i), tc.mutate)
			err := k8s.Create(context.Background(), c)
			if tc.want != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			// Defaults are applied on the way in.
			g.Expect(c.Spec.Format).NotTo(BeEmpty())
			g.Expect(c.Spec.NodeRegistration.CRISocket).To(Equal(bootstrapv1.DefaultCRISocket))
			g.Expect(c.Spec.Binaries.Directory).To(Equal(`C:\k`))
			g.Expect(c.Spec.DefenderExclusions).To(Equal(ptr.To(true)))
		})
	}
}

func TestTemplateSpecIsImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tpl := &bootstrapv1.WindowsConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: "default"}}
	tpl.Spec.Template.Spec.NodeRegistration.Labels = map[string]string{"tier": "web"}
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())

	// Metadata may change; re-sending the same spec is fine.
	tpl.Labels = map[string]string{"team": "a"}
	g.Expect(k8s.Update(ctx, tpl)).To(Succeed())

	tpl.Spec.Template.Spec.NodeRegistration.Labels["tier"] = "api"
	err := k8s.Update(ctx, tpl)
	g.Expect(err).To(MatchError(ContainSubstring("WindowsConfigTemplate spec is immutable")))

	bad := &bootstrapv1.WindowsConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}}
	bad.Spec.Template.Spec.Files = []bootstrapv1.File{{Path: "relative", Content: ptr.To("x")}}
	g.Expect(k8s.Create(ctx, bad)).To(MatchError(ContainSubstring("spec.template.spec.files[0].path")))
}
