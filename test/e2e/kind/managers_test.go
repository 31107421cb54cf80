//go:build e2e

package kind

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/test/framework"
)

// capwinManager is one of capwin's managers as clusterctl init installs it.
type capwinManager struct {
	namespace, leaseName string
}

var capwinManagers = []capwinManager{
	{namespace: "capwin-infrastructure-system", leaseName: "capwin-infrastructure-manager-leader-election"},
	{namespace: "capwin-bootstrap-system", leaseName: "capwin-bootstrap-windows-manager-leader-election"},
}

// metricsPort is the managers' --diagnostics-address port (the release's default, :8443).
const metricsPort = 8443

// leaderPod is the Pod that holds a manager's leader election Lease (its holder identity is
// the Pod name, an underscore and a random suffix, as controller-runtime writes it). A Lease still
// naming a Pod that is gone (deleted, its successor not leading yet) is waited out.
func leaderPod(ctx context.Context, c client.Client, m capwinManager) (*corev1.Pod, string) {
	lease := &coordinationv1.Lease{}
	pod := &corev1.Pod{}
	var holder string
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: m.leaseName}, lease)).To(Succeed())
		holder = ptr.Deref(lease.Spec.HolderIdentity, "")
		g.Expect(holder).ToNot(BeEmpty())
		name, _, _ := strings.Cut(holder, "_")
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: name}, pod)).To(Succeed(), "leader %s", holder)
	}, "2m", "2s").Should(Succeed(), "no leader Pod for Lease %s/%s", m.namespace, m.leaseName)
	return pod, holder
}

// deleteLeader deletes the Pod that leads manager m and waits until another one leads.
func deleteLeader(ctx context.Context, c client.Client, m capwinManager) {
	pod, holder := leaderPod(ctx, c, m)
	Byf("Deleting the leader Pod %s/%s of %s", pod.Namespace, pod.Name, m.leaseName)
	Expect(c.Delete(ctx, pod)).To(Succeed())
	Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: m.leaseName}, lease)).To(Succeed())
		g.Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).ToNot(BeEmpty())
		g.Expect(*lease.Spec.HolderIdentity).ToNot(Equal(holder))
	}, "3m", "2s").Should(Succeed(), "no new leader for %s after deleting %s", m.leaseName, pod.Name)
}

// scrapeMetrics GETs /metrics of the Pod over HTTPS through a port-forward, with a bearer token.
func scrapeMetrics(ctx context.Context, proxy framework.ClusterProxy, pod *corev1.Pod, token string) (int, string) {
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialPod(ctx, proxy.GetRESTConfig(), pod, metricsPort)
		},
		// The serving certificate is the manager's self-signed one, as Prometheus would be told to accept.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test scrape of a self-signed endpoint
	}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://%s:%d/metrics", pod.Name, metricsPort), http.NoBody)
	Expect(err).ToNot(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	Expect(err).ToNot(HaveOccurred(), "scrape %s/%s", pod.Namespace, pod.Name)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).ToNot(HaveOccurred())
	return resp.StatusCode, string(body)
}

// serviceAccountToken creates a ServiceAccount (bound to role when it is not empty) and returns
// a token for it from the TokenRequest API.
func serviceAccountToken(ctx context.Context, proxy framework.ClusterProxy, namespace, name, role string) string {
	c := proxy.GetClient()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).ToNot(HaveOccurred())
	}
	if role != "" {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
		}
		if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).ToNot(HaveOccurred())
		}
	}
	tr, err := proxy.GetClientSet().CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	Expect(err).ToNot(HaveOccurred())
	return tr.Status.Token
}

// metricsReaderToken returns a token of a ServiceAccount allowed to GET /metrics.
func metricsReaderToken(ctx context.Context, proxy framework.ClusterProxy) string {
	const reader = "capwin-e2e-metrics-reader"
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	if err := proxy.GetClient().Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).ToNot(HaveOccurred())
	}
	return serviceAccountToken(ctx, proxy, e2eConfig.MustGetVariable(simulatorsNamespace), reader, reader)
}

var _ = Describe("capwin's managers as clusterctl installed them", func() {
	It("run the images the e2e config names (the release's stamped tags with make test-e2e-release)", func() {
		var names []string
		for _, img := range e2eConfig.Images {
			names = append(names, img.Name)
		}
		for _, m := range capwinManagers {
			pod, _ := leaderPod(ctx, bootstrapClusterProxy.GetClient(), m)
			Byf("%s/%s runs %s", pod.Namespace, pod.Name, pod.Spec.Containers[0].Image)
			Expect(names).To(ContainElement(pod.Spec.Containers[0].Image), "the image of %s is none the e2e config loads", pod.Name)
			Expect(pod.Status.ContainerStatuses).ToNot(BeEmpty())
			Expect(pod.Status.ContainerStatuses[0].Ready).To(BeTrue(), "%s is not ready", pod.Name)
		}
	})

	It("run under the restricted Pod Security Standard, behind their NetworkPolicy", func() {
		c := bootstrapClusterProxy.GetClient()
		for _, m := range capwinManagers {
			ns := &corev1.Namespace{}
			Expect(c.Get(ctx, client.ObjectKey{Name: m.namespace}, ns)).To(Succeed())
			Expect(ns.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"), m.namespace)
			pod, _ := leaderPod(ctx, c, m)
			Byf("%s/%s was admitted under restricted and is Ready", pod.Namespace, pod.Name)
			Expect(pod.Status.ContainerStatuses[0].Ready).To(BeTrue(), "%s is not ready", pod.Name)
			Expect(pod.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
			policies := &networkingv1.NetworkPolicyList{}
			Expect(c.List(ctx, policies, client.InNamespace(m.namespace))).To(Succeed())
			Expect(policies.Items).To(HaveLen(1), "one NetworkPolicy in %s", m.namespace)
			sel, err := metav1.LabelSelectorAsSelector(&policies.Items[0].Spec.PodSelector)
			Expect(err).ToNot(HaveOccurred())
			Expect(sel.Matches(labels.Set(pod.Labels))).To(BeTrue(), "%s does not select %s", policies.Items[0].Name, pod.Name)
		}
	})

	It("serve /metrics to a ServiceAccount allowed to read them, and to no other", func() {
		proxy := bootstrapClusterProxy
		c := proxy.GetClient()
		allowed := metricsReaderToken(ctx, proxy)
		denied := serviceAccountToken(ctx, proxy, e2eConfig.MustGetVariable(simulatorsNamespace), "capwin-e2e-no-metrics", "")
		for _, m := range capwinManagers {
			pod, _ := leaderPod(ctx, c, m)
			Byf("Scraping %s/%s", pod.Namespace, pod.Name)
			code, body := scrapeMetrics(ctx, proxy, pod, allowed)
			Expect(code).To(Equal(http.StatusOK), "metrics of %s with a reader's token: %s", pod.Name, body)
			Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
			code, body = scrapeMetrics(ctx, proxy, pod, denied)
			Expect(code).To(Equal(http.StatusForbidden), "metrics of %s with a token without the role: %s", pod.Name, body)
		}
	})
})
