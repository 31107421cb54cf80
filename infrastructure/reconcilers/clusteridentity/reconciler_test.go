package clusteridentity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestReconcile: an identity owns its Secret and is Ready; a missing or incomplete Secret, one
// that belongs to a cluster, a selector that does not parse, no hosts to lend its login to and a
// host address that cannot match are Ready=False with a reason, and the Secret of another gains
// no owner. A second reconcile changes nothing (idempotent).
func TestReconcile(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = infrav1.AddToScheme(scheme)
	held := metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "VCenterCluster", Name: "win", UID: "cluster"}
	for _, tc := range []struct {
		name     string
		secret   *corev1.Secret
		selector *metav1.LabelSelector
		reason   string
		owned    bool
		// addresses are the identity's hosts[0].addresses; nil: hv1.example.com; empty: no hosts.
		addresses []string
	}{
		{"ready", &corev1.Secret{Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}, nil, "", true, nil},
		{"missing", nil, nil, infrav1.CredentialsNotFoundReason, false, nil},
		{"no password", &corev1.Secret{Data: map[string][]byte{"username": []byte("u")}}, nil, infrav1.CredentialsNotFoundReason, true, nil},
		{"a cluster's", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{held}},
			Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}, nil, infrav1.CredentialsInUseReason, false, nil},
		{"bad selector", &corev1.Secret{Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}},
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}, infrav1.InvalidSpecReason, true, nil},
		{"no hosts", &corev1.Secret{Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}, nil, infrav1.EndpointNotLentReason, true, []string{}},
		{"bad address", &corev1.Secret{Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}, nil, infrav1.InvalidSpecReason, true, []string{"10.0.0.0/8", "HV.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "hosts", UID: "identity"},
				Spec: infrav1.HyperVClusterIdentitySpec{ClusterIdentitySpec: infrav1.ClusterIdentitySpec{
					SecretName: "login", AllowedNamespaces: infrav1.AllowedNamespaces{Selector: tc.selector}}}}
			switch {
			case tc.addresses == nil:
				id.Spec.Hosts = []infrav1.HyperVIdentityHosts{{Addresses: []string{"hv1.example.com"}}}
			case len(tc.addresses) > 0:
				id.Spec.Hosts = []infrav1.HyperVIdentityHosts{{Addresses: tc.addresses}}
			}
			b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(id).WithStatusSubresource(id)
			if tc.secret != nil {
				tc.secret.Namespace, tc.secret.Name = "capwin", "login"
				b = b.WithObjects(tc.secret)
			}
			c := b.Build()
			r := &Reconciler{Client: c, Namespace: "capwin", NewObject: func() client.Object { return &infrav1.HyperVClusterIdentity{} }}
			for range 2 {
				if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(id)}); err != nil {
					t.Fatal(err)
				}
			}
			got := &infrav1.HyperVClusterIdentity{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(id), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Ready != (tc.reason == "") || len(got.Status.Conditions) != 1 ||
				(tc.reason != "" && got.Status.Conditions[0].Reason != tc.reason) {
				t.Errorf("ready %t, conditions %+v; want reason %q", got.Status.Ready, got.Status.Conditions, tc.reason)
			}
			if tc.secret == nil {
				return
			}
			secret := &corev1.Secret{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "capwin", Name: "login"}, secret); err != nil {
				t.Fatal(err)
			}
			owned := false
			for _, ref := range secret.OwnerReferences {
				owned = owned || ref.UID == id.UID
			}
			if owned != tc.owned || len(secret.OwnerReferences) > len(tc.secret.OwnerReferences)+1 {
				t.Errorf("owners %+v; want owned by the identity: %t", secret.OwnerReferences, tc.owned)
			}
		})
	}
}

// TestInShard: a manager keeps the identities of its shard and the unlabelled (shared) ones,
// never another shard's; a manager without a filter keeps them all.
func TestInShard(t *testing.T) {
	identity := func(labels map[string]string) client.Object {
		return &infrav1.VCenterClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "id", Labels: labels}}
	}
	shardA := identity(map[string]string{clusterv1.WatchLabel: "a"})
	shardB := identity(map[string]string{clusterv1.WatchLabel: "b"})
	shared := identity(nil)
	for _, tc := range []struct {
		filter string
		obj    client.Object
		want   bool
	}{
		{"a", shardA, true}, {"a", shardB, false}, {"a", shared, true},
		{"", shardA, true}, {"", shardB, true}, {"", shared, true},
	} {
		if got := InShard(tc.filter).Generic(event.GenericEvent{Object: tc.obj}); got != tc.want {
			t.Errorf("filter %q, labels %v: kept %t, want %t", tc.filter, tc.obj.GetLabels(), got, tc.want)
		}
	}
}
