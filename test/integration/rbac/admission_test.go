package rbac_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testAdmission shows that the apiserver enforces OwnerReferencesPermissionEnforcement, so that
// the scenarios after it would see the 403s a kind (CAPI e2e) or OpenShift management cluster
// answers: a user allowed to get and patch Secrets, not to delete them, may change a label but
// not add an owner reference.
func testAdmission(t *testing.T, s *suite) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := s.namespace(t, "rbac-admission-")
	const user = "rbac-test-ownerref-probe"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}}
	g.Expect(s.admin.Create(ctx, secret)).To(Succeed())
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "patch"}}}}
	g.Expect(s.admin.Create(ctx, role)).To(Succeed())
	g.Expect(s.admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})).To(Succeed())
	cfg := rest.CopyConfig(s.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: s.admin.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	label := func() error {
		return c.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns, Labels: map[string]string{"probe": "1"}}},
			client.Merge)
	}
	g.Eventually(label).Should(Succeed()) // the Role reaches the authorizer's cache
	err = c.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "00000000-0000-0000-0000-000000000001"}}}},
		client.Merge)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "adding an owner reference without delete on the Secret: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("ownerRef"))
}
