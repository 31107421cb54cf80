package e2e_test

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/test/harness"
)

// The enterprise workers join the harness's Active Directory domain and use the company
// registry: a mirror of registry.k8s.io (where the pause image comes from) with the company's CA
// and pull credentials.
const (
	mirrorURL    = "https://mirror.corp.example"
	pullUser     = "svc-k8s-pull"
	pullPassword = "pull-p4ss" //nolint:gosec // G101: a test credential that must reach the node's containerd
)

// enterpriseWorkers stores the CA ConfigMap and the registry and domain credentials Secrets in the workload's
// namespace and returns the bootstrap settings that use them.
func enterpriseWorkers(t *testing.T, h *harness.Harness) func(*bootstrapv1.WindowsConfigSpec) {
	g := NewWithT(t)
	ca, err := os.ReadFile("../../bootstrap/pkg/userdata/testdata/registry-ca.pem")
	g.Expect(err).NotTo(HaveOccurred())
	c := h.Management.Client
	g.Expect(c.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "corp-ca", Namespace: harness.Namespace},
		Data: map[string]string{"ca.pem": string(ca)}})).To(Succeed())
	g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "corp-pull", Namespace: harness.Namespace},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte(pullUser), "password": []byte(pullPassword)}})).To(Succeed())
	g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "domain-join", Namespace: harness.Namespace},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte(harness.DomainJoinUser), "password": []byte(h.Guests.Domain.Password)}})).To(Succeed())
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: harness.DomainName, OrganizationalUnit: harness.DomainOU,
			DNSServers: []string{harness.DomainDNS}, Credentials: &bootstrapv1.SecretName{Name: "domain-join"}}
		s.Containerd.Registries = []bootstrapv1.Registry{{Host: "registry.k8s.io", Mirrors: []bootstrapv1.RegistryMirror{{
			URL: mirrorURL,
			RegistryAccess: bootstrapv1.RegistryAccess{
				CA:          &bootstrapv1.CABundle{ConfigMap: &bootstrapv1.ConfigMapKey{Name: "corp-ca", Key: "ca.pem"}},
				Credentials: &bootstrapv1.SecretName{Name: "corp-pull"},
			},
		}}}}
	}
}

// checkEnterpriseNode: the node joined the domain (its computer account is in the OU), and its containerd (containerd's own resolver on the files the
// bootstrap wrote) pulls the pause image from the mirror first, trusting the company CA and
// sending the pull credentials, and from registry.k8s.io after it.
func checkEnterpriseNode(g Gomega, h *harness.Harness, node string) {
	guest := h.Guests.ByNode(node)
	g.Expect(guest).NotTo(BeNil(), "guest of node %s", node)
	pull := guest.SandboxPull()
	g.Expect(pull.Image).To(Equal("registry.k8s.io/pause:3.10"))
	g.Expect(pull.Endpoints).To(HaveLen(2))
	g.Expect(pull.Endpoints[0].URL).To(Equal(mirrorURL + "/v2"))
	g.Expect(pull.Endpoints[0].RootCAs).NotTo(BeNil(), "the mirror's CA")
	g.Expect(pull.Endpoints[0].Credentials).To(Equal(pullUser + ":" + pullPassword))
	g.Expect(pull.Endpoints[1].URL).To(Equal("https://registry.k8s.io/v2"))
	g.Expect(h.Guests.Domain.Accounts()).To(HaveKeyWithValue(strings.ToUpper(node), harness.DomainOU), "computer account of %s", node)
}

// kubelet is spec.kubeletConfiguration from a JSON object of KubeletConfiguration fields.
func kubelet(fields string) *runtime.RawExtension {
	return &runtime.RawExtension{Raw: []byte(fields)}
}
