package rbac_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	bootstrapsetup "github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
)

// suite is what the scenarios share: the apiserver, an admin client and the two managers.
type suite struct {
	env   *crenvtest.Environment
	admin client.Client
	boot  *running
	infra *running
	// sessions is the infrastructure manager's vCenter session cache.
	sessions *session.Sessions
}

// identityNamespace is the infrastructure manager's namespace in the release (its POD_NAMESPACE).
const identityNamespace = "capwin-infrastructure-system"

// TestRBAC runs both managers as their release ServiceAccounts through real work (vcsim,
// simulated Hyper-V hosts, a reachable workload cluster) and fails on any request the release's
// RBAC denies; it also scrapes the secured /metrics endpoints.
func TestRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("envtest, vcsim and Hyper-V simulator")
	}
	log := zap.New(zap.WriteTo(logOutput()))
	ctrl.SetLogger(log)
	klog.SetLogger(log) // leader election and the metrics auth filter log through klog
	begin := time.Now()
	s := start(t)
	t.Logf("%5.1fs both managers lead and serve webhooks", time.Since(begin).Seconds())
	for _, sc := range []struct {
		name string
		run  func(*testing.T, *suite)
	}{
		{"admission", testAdmission},
		{"machines", testMachines},
		{"bootstrap", testBootstrap},
		{"metrics", testMetrics},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, s) })
		t.Logf("%5.1fs %s done", time.Since(begin).Seconds(), sc.name)
	}
	for _, m := range []*running{s.boot, s.infra} {
		if d := m.rec.denials(); len(d) > 0 {
			t.Errorf("%s: the release's RBAC denied %d kinds of request:\n    %s", m.name, len(d), strings.Join(d, "\n    "))
		}
	}
}

// start brings up the apiserver with CAPI's CRDs and the release's CRDs, RBAC and webhook
// configurations, and both managers as their ServiceAccounts.
func start(t *testing.T) *suite {
	g := NewWithT(t)
	comps, err := releaseComponents(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	s := &suite{env: startEnv(t, comps)}
	scheme := infrasetup.Scheme()
	g.Expect(bootstrapv1.AddToScheme(scheme)).To(Succeed())
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	s.admin, err = client.New(s.env.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range comps {
		g.Expect(c.applyRBAC(t.Context(), s.admin)).To(Succeed())
	}
	certDir, caBundle := servingCert(t)

	// Managers stop when the test's context ends; the apiserver only after they did.
	ctx, cancel := context.WithCancel(context.Background())
	var stopped []*running
	t.Cleanup(func() {
		cancel()
		for _, m := range stopped {
			select {
			case err := <-m.done:
				if err != nil {
					t.Logf("%s stopped: %v", m.name, err)
				}
			case <-time.After(30 * time.Second):
				t.Logf("%s did not stop within 30s", m.name)
			}
		}
	})
	s.boot, err = startManager(ctx, comps["bootstrap"], s.env.Config, bootstrapsetup.ControllerName, bootstrapsetup.Scheme(), certDir,
		func(ctx context.Context, mgr ctrl.Manager, common *manager.Options) error {
			if err := bootstrapsetup.Webhooks(mgr); err != nil {
				return err
			}
			return bootstrapsetup.Reconcilers(ctx, mgr, bootstrapsetup.Options{
				WatchFilterValue: common.WatchFilterValue, TokenTTL: 15 * time.Minute, WindowsConfigConcurrency: 10,
				ClusterCache: manager.ClusterCacheOptions{Concurrency: 100, QPS: 20, Burst: 30},
			})
		})
	g.Expect(err).NotTo(HaveOccurred())
	stopped = append(stopped, s.boot)
	sessions := &session.Sessions{}
	s.sessions = sessions
	t.Cleanup(func() { sessions.Close(context.Background()) })
	s.infra, err = startManager(ctx, comps["infrastructure"], s.env.Config, infrasetup.ControllerName, infrasetup.Scheme(), certDir,
		func(ctx context.Context, mgr ctrl.Manager, common *manager.Options) error {
			if err := infrasetup.Webhooks(mgr); err != nil {
				return err
			}
			return infrasetup.Reconcilers(ctx, mgr, infrasetup.Options{
				WatchFilterValue: common.WatchFilterValue, VCenterMachineConcurrency: 10, VCenterClusterConcurrency: 5,
				HyperVMachineConcurrency: 10, HyperVClusterConcurrency: 5,
				ClusterCache: manager.ClusterCacheOptions{Concurrency: 100, QPS: 20, Burst: 30},
				PollInterval: 300 * time.Millisecond, TaskPollInterval: 100 * time.Millisecond, HostRecheck: time.Second,
				Sessions: sessions, Conns: &hyperv.Conns{Timeout: 5 * time.Second}, IdentityNamespace: identityNamespace,
			})
		})
	g.Expect(err).NotTo(HaveOccurred())
	stopped = append(stopped, s.infra)
	g.Expect(comps["bootstrap"].installWebhooks(t.Context(), s.admin, s.boot.webhookURL, caBundle)).To(Succeed())
	g.Expect(comps["infrastructure"].installWebhooks(t.Context(), s.admin, s.infra.webhookURL, caBundle)).To(Succeed())
	t.Cleanup(func() { checkGrants(t, comps, s) })
	return s
}

// admissionPlugins are enabled on top of kube-apiserver's default set: NodeRestriction as kubeadm
// (and so kind) enables it, and OwnerReferencesPermissionEnforcement as Cluster API's kind e2e
// framework (test/framework/bootstrap) and OpenShift do. The latter admits a change of an object's
// ownerReferences only with delete on the object, and blockOwnerDeletion only with update on the
// owner's finalizers subresource.
var admissionPlugins = []string{"NodeRestriction", "OwnerReferencesPermissionEnforcement"}

// startEnv starts kube-apiserver (authorization mode RBAC, the admission plugins of a kubeadm API
// server plus OwnerReferencesPermissionEnforcement) and etcd with CAPI's CRDs from the module cache
// and capwin's CRDs as the release carries them.
func startEnv(t *testing.T, comps map[string]*components) *crenvtest.Environment {
	g := NewWithT(t)
	assets, err := envtest.Assets()
	g.Expect(err).NotTo(HaveOccurred())
	paths, err := envtest.CRDPaths()
	g.Expect(err).NotTo(HaveOccurred())
	var capi []string
	for _, p := range paths {
		// Under the repository means below its root: a module cache beside a clone may share the
		// root's name as a prefix (/work/c and /work/c-env/gomod).
		if !strings.HasPrefix(p, envtest.RepoRoot()+string(filepath.Separator)) {
			capi = append(capi, p)
		}
	}
	env := &crenvtest.Environment{BinaryAssetsDirectory: assets, CRDDirectoryPaths: capi, ErrorIfCRDPathMissing: true}
	// envtest passes --disable-admission-plugins=ServiceAccount (no controller creates default
	// ServiceAccounts here); kubeadm does not, so the default set is left whole. The plugin only
	// admits Pods, which nothing here creates.
	env.ControlPlane.GetAPIServer().Configure().
		Disable("disable-admission-plugins").
		Set("enable-admission-plugins", strings.Join(admissionPlugins, ","))
	for _, c := range comps {
		crds, err := c.crds()
		g.Expect(err).NotTo(HaveOccurred())
		env.CRDs = append(env.CRDs, crds...)
	}
	_, err = env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	return env
}

// servingCert writes a self-signed serving certificate for 127.0.0.1 (both managers' webhook
// servers) and returns its directory and the CA bundle the webhook configurations carry.
func servingCert(t *testing.T) (string, []byte) {
	g := NewWithT(t)
	crt, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "tls.crt"), crt, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)).To(Succeed())
	return dir, crt
}

// namespace creates a namespace for one scenario.
func (s *suite) namespace(t *testing.T, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	NewWithT(t).Expect(s.admin.Create(t.Context(), ns)).To(Succeed())
	return ns.Name
}

// eventually is Eventually with the scenarios' timeout; a failure names the manager's denials.
func (s *suite) eventually(t *testing.T, m *running, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f, time.Minute, 100*time.Millisecond).Should(Succeed(), func() string {
		return fmt.Sprintf("%s denied: %v", m.name, m.rec.denials())
	})
}

func condition(conds []metav1.Condition, t string) metav1.Condition {
	for _, c := range conds {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// logOutput shows the managers' logs only when CAPWIN_TEST_DEBUG is set.
func logOutput() io.Writer {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	return io.Discard
}
