package rbac_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capwin/capwin/internal/release"
	"github.com/capwin/capwin/internal/test/envtest"
)

// metricsReader is the ClusterRole of the scrape example (infrastructure/config/prometheus):
// what a Prometheus's RBAC grants it.
func metricsReader(g Gomega) []rbacv1.PolicyRule {
	out, err := release.Kustomize(filepath.Join(envtest.RepoRoot(), "infrastructure", "config", "prometheus"))
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := utilyaml.ToUnstructured(out)
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			role := &rbacv1.ClusterRole{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role)).To(Succeed())
			return role.Rules
		}
	}
	g.Expect(objs).To(BeEmpty(), "no ClusterRole in the scrape example")
	return nil
}

// testMetrics scrapes each manager's /metrics over HTTPS: a token of a ServiceAccount bound to
// the metrics reader role gets 200 with controller-runtime's metrics, one without gets 403. The
// manager checks both with a TokenReview and a SubjectAccessReview, as its ServiceAccount.
func testMetrics(t *testing.T, s *suite) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := s.namespace(t, "rbac-metrics-")
	for _, name := range []string{"prometheus", "nobody"} {
		g.Expect(s.admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})).To(Succeed())
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "rbac-test-metrics-reader-"}, Rules: metricsReader(g)}
	g.Expect(s.admin.Create(ctx, role)).To(Succeed())
	g.Expect(s.admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}},
	})).To(Succeed())
	cs, err := kubernetes.NewForConfig(s.env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	token := func(name string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}
	reader, nobody := token("prometheus"), token("nobody")

	// Each manager's own series: the token counter, the machine counts (exported by the leader).
	series := map[*running]string{s.boot: `capwin_bootstrap_tokens_total{operation="issue"}`, s.infra: `capwin_machines{kind="vcentermachine",state="Provisioned"}`}
	for m, controller := range map[*running]string{s.boot: "windowsconfig", s.infra: "vcentermachine"} {
		t.Run(m.name, func(t *testing.T) {
			g := NewWithT(t)
			code, body := scrape(g, m.metricsAddr, reader)
			g.Expect(code).To(Equal(http.StatusOK), "body: %.300s", body)
			g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="` + controller + `"`))
			g.Expect(body).To(ContainSubstring(series[m]))
			code, body = scrape(g, m.metricsAddr, nobody)
			g.Expect(code).To(Equal(http.StatusForbidden), "body: %.300s", body)
		})
	}
}

// scrape GETs https://addr/metrics with a bearer token. The endpoint's certificate is
// self-signed, so it is not verified (as CAPI's Prometheus setup does).
func scrape(g Gomega, addr, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed diagnostics certificate
	}}
	resp, err := c.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}
