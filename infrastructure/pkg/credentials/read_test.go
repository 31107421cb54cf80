package credentials

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// TestReaderSecret: what a cluster may read, by reference kind, owner and allowedNamespaces
// (unset: no namespace; a list; a label selector; an empty selector: every namespace), and
// whether the identity lends its login for what the cluster asks (asked of identities only).
func TestReaderSecret(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = infrav1.AddToScheme(scheme)
	login := func(ns, name string, owners ...metav1.OwnerReference) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners},
			Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
	}
	owner := func(kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID(uid)}
	}
	identity := func(name string, a infrav1.AllowedNamespaces) *infrav1.VCenterClusterIdentity {
		return &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
			Spec: infrav1.VCenterClusterIdentitySpec{ClusterIdentitySpec: infrav1.ClusterIdentitySpec{SecretName: "login-" + name, AllowedNamespaces: a}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"vcenter": "prod"}}},
		login("team-a", "mine", owner("VCenterCluster", "win", "me")),
		login("team-a", "theirs", owner("Cluster", "x", "c1"), owner("HyperVCluster", "hv", "other")),
		login("team-a", "unowned"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "tls-key"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}},
		identity("none", infrav1.AllowedNamespaces{}),
		identity("listed", infrav1.AllowedNamespaces{List: []string{"team-a"}}),
		identity("labelled", infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"vcenter": "prod"}}}),
		identity("other-label", infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"vcenter": "test"}}}),
		identity("everyone", infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}}),
		login("capwin", "login-listed", owner("VCenterClusterIdentity", "listed", "listed")),
		login("capwin", "login-labelled"),
		login("capwin", "login-everyone", owner("VCenterClusterIdentity", "someone-else", "x")),
	).Build()
	r := Reader{Client: c, Namespace: "capwin"}
	cluster := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "win", UID: "me"}}
	for _, tc := range []struct {
		ref     Ref
		reason  string // "" ok; "missing" a plain error
		notLent bool   // the identity does not lend its login for what the cluster asks
	}{
		{Ref{Name: "mine"}, "", false},
		{Ref{Kind: infrav1.SecretKind, Name: "unowned"}, "", false},
		{Ref{Name: "theirs"}, infrav1.CredentialsInUseReason, false},
		{Ref{Name: "absent"}, "missing", false},
		{Ref{Name: "tls-key"}, infrav1.SecretNotALoginReason, false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "none"}, infrav1.NamespaceNotAllowedReason, false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "listed"}, "", false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "labelled"}, "", false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "other-label"}, infrav1.NamespaceNotAllowedReason, false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "everyone"}, infrav1.CredentialsInUseReason, false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "absent"}, "missing", false},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "listed"}, infrav1.EndpointNotLentReason, true},
		{Ref{Kind: infrav1.VCenterClusterIdentityKind, Name: "none"}, infrav1.NamespaceNotAllowedReason, true},
		{Ref{Name: "mine"}, "", true},
	} {
		lent := func(id client.Object) error {
			if tc.ref.Kind != infrav1.VCenterClusterIdentityKind || id.GetName() != tc.ref.Name {
				t.Errorf("%+v: asked whether %s lends", tc.ref, id.GetName())
			}
			if tc.notLent {
				return hypervisor.Errorf(infrav1.EndpointNotLentReason, "not lent")
			}
			return nil
		}
		_, err := r.Secret(context.Background(), cluster, tc.ref, lent)
		var terminal *hypervisor.Error
		got := ""
		switch {
		case errors.As(err, &terminal):
			got = terminal.Reason
		case err != nil:
			got = "missing"
		}
		if got != tc.reason {
			t.Errorf("%+v: got %q (%v), want %q", tc.ref, got, err, tc.reason)
		}
	}
}
