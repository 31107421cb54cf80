package crds

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestIdentityRefKind: an identityRef or credentialsRef with only a name (every object and
// template written before the identity kinds) is a Secret; each kind accepts only its own
// identity kind.
func TestIdentityRefKind(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	vc := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: "ref-name-only", Namespace: "default"},
		Spec: infrav1.VCenterClusterSpec{Server: "https://vcenter.example.com", Datacenter: "dc1", Insecure: true,
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-credentials"}}}
	g.Expect(k8s.Create(ctx, vc)).To(Succeed())
	g.Expect(vc.Spec.IdentityRef.Kind).To(Equal(infrav1.SecretKind))

	wrong := vc.DeepCopy()
	wrong.ObjectMeta = metav1.ObjectMeta{Name: "ref-hyperv-kind", Namespace: "default"}
	wrong.Spec.IdentityRef.Kind = infrav1.HyperVClusterIdentityKind
	g.Expect(k8s.Create(ctx, wrong)).To(MatchError(ContainSubstring("spec.identityRef.kind")))

	hc := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "ref-name-only", Namespace: "default"}, Spec: hvClusterSpec()}
	hc.Spec.Hosts[0].CredentialsRef = infrav1.SecretReference{}
	hc.Spec.CredentialsRef = infrav1.HyperVIdentityReference{Name: "hv"}
	g.Expect(k8s.Create(ctx, hc)).To(Succeed())
	g.Expect(hc.Spec.CredentialsRef.Kind).To(Equal(infrav1.SecretKind))

	hcWrong := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: "ref-vcenter-kind", Namespace: "default"}, Spec: hvClusterSpec()}
	hcWrong.Spec.CredentialsRef = infrav1.HyperVIdentityReference{Kind: infrav1.VCenterClusterIdentityKind, Name: "hv"}
	g.Expect(k8s.Create(ctx, hcWrong)).To(MatchError(ContainSubstring("spec.credentialsRef.kind")))
}

// TestClusterIdentitySchema: identities are cluster-scoped, name a Secret, and list namespaces
// by valid names.
func TestClusterIdentitySchema(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		mutate func(*infrav1.ClusterIdentitySpec)
		want   string
	}{
		{"list and selector", func(*infrav1.ClusterIdentitySpec) {}, ""},
		{"no namespace allowed", func(s *infrav1.ClusterIdentitySpec) { s.AllowedNamespaces = infrav1.AllowedNamespaces{} }, ""},
		{"no secret", func(s *infrav1.ClusterIdentitySpec) { s.SecretName = "" }, "spec.secretName"},
		{"long namespace", func(s *infrav1.ClusterIdentitySpec) { s.AllowedNamespaces.List = []string{strings.Repeat("a", 64)} }, "spec.allowedNamespaces.list[0]"},
		{"duplicate namespace", func(s *infrav1.ClusterIdentitySpec) { s.AllowedNamespaces.List = []string{"a", "a"} }, "Duplicate value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := infrav1.ClusterIdentitySpec{SecretName: "login", AllowedNamespaces: infrav1.AllowedNamespaces{
				List: []string{"team-a"}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"capwin/vcenter": "prod"}}}}
			tc.mutate(&spec)
			name := strings.ReplaceAll(tc.name, " ", "-")
			for _, obj := range []client.Object{
				&infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: infrav1.VCenterClusterIdentitySpec{ClusterIdentitySpec: spec}},
				&infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: infrav1.HyperVClusterIdentitySpec{ClusterIdentitySpec: spec}},
			} {
				err := k8s.Create(ctx, obj)
				if tc.want != "" {
					g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
					continue
				}
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(obj.GetNamespace()).To(BeEmpty())
			}
		})
	}
}

// TestLendingSchema: what an identity lends is checked by the schema: a vCenter server is an
// https URL with a thumbprint or CA bundle, a hosts entry names addresses.
func TestLendingSchema(t *testing.T) {
	ctx := context.Background()
	const thumb = "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD"
	base := infrav1.ClusterIdentitySpec{SecretName: "login"}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want string
	}{
		{"vcenter", &infrav1.VCenterClusterIdentity{Spec: infrav1.VCenterClusterIdentitySpec{ClusterIdentitySpec: base,
			Servers: []infrav1.VCenterIdentityServer{{Server: "https://vc.example.com", Thumbprint: thumb}}}}, ""},
		{"unverified server", &infrav1.VCenterClusterIdentity{Spec: infrav1.VCenterClusterIdentitySpec{ClusterIdentitySpec: base,
			Servers: []infrav1.VCenterIdentityServer{{Server: "https://vc.example.com"}}}}, "set thumbprint or caBundle"},
		{"plain http", &infrav1.VCenterClusterIdentity{Spec: infrav1.VCenterClusterIdentitySpec{ClusterIdentitySpec: base,
			Servers: []infrav1.VCenterIdentityServer{{Server: "http://vc.example.com", Thumbprint: thumb}}}}, "spec.servers[0].server"},
		{"hyperv", &infrav1.HyperVClusterIdentity{Spec: infrav1.HyperVClusterIdentitySpec{ClusterIdentitySpec: base,
			Hosts: []infrav1.HyperVIdentityHosts{{Addresses: []string{"*.hv.example.com", "10.0.0.0/24"}}}}}, ""},
		{"hosts without addresses", &infrav1.HyperVClusterIdentity{Spec: infrav1.HyperVClusterIdentitySpec{ClusterIdentitySpec: base,
			Hosts: []infrav1.HyperVIdentityHosts{{Port: 5986}}}}, "spec.hosts[0].addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tc.obj.SetName("lend-" + strings.ReplaceAll(tc.name, " ", "-"))
			err := k8s.Create(ctx, tc.obj)
			if tc.want != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(k8s.Delete(ctx, tc.obj)).To(Succeed())
		})
	}
}
