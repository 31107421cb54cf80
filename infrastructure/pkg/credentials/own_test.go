package credentials

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestOwnLabels: Own labels the Secrets it takes (Label, what the manager's Secret cache
// selects), also one it owned before the label existed, and leaves alone another cluster's, a TLS
// key and another controller's Secret named by mistake (taking them would delete them with the
// cluster).
func TestOwnLabels(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = infrav1.AddToScheme(scheme)
	vc := &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "win", UID: "me"}}
	owner := func(name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "VCenterCluster", Name: name, UID: k8stypes.UID(uid)}
	}
	secret := func(name string, owners ...metav1.OwnerReference) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners}}
	}
	tlsKey := secret("tls-key")
	tlsKey.Type = corev1.SecretTypeTLS
	managed := secret("managed", metav1.OwnerReference{APIVersion: "v1", Kind: "ServiceAccount", Name: "db", UID: "sa", Controller: ptr.To(true)})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		secret("new"), secret("owned-before", owner("win", "me")), secret("theirs", owner("other", "x")), tlsKey, managed,
	).Build()
	for name, want := range map[string]bool{"new": true, "owned-before": true, "theirs": false, "tls-key": false, "managed": false} {
		if err := Own(context.Background(), c, vc, client.ObjectKey{Namespace: "ns", Name: name}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := &corev1.Secret{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, s); err != nil {
			t.Fatal(err)
		}
		if _, got := s.Labels[Label]; got != want {
			t.Errorf("%s: labelled %v, want %v", name, got, want)
		}
		if want && HeldByOther(s, vc) {
			t.Errorf("%s: not owned by the cluster: %+v", name, s.OwnerReferences)
		}
		if !want && slices.ContainsFunc(s.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == vc.UID }) {
			t.Errorf("%s: taken by the cluster: %+v", name, s.OwnerReferences)
		}
	}
}

// TestSecretsFallBack: a Secret the cache does not hold (not labelled yet) is read live.
func TestSecretsFallBack(t *testing.T) {
	scheme := clientgoscheme.Scheme
	labelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{Label: ""}}, Data: map[string][]byte{"from": []byte("cache")}}
	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Data: map[string][]byte{"from": []byte("live")}}
	r := secrets{
		cached: fake.NewClientBuilder().WithScheme(scheme).WithObjects(labelled).Build(),
		live:   fake.NewClientBuilder().WithScheme(scheme).WithObjects(plain).Build(),
	}
	for name, want := range map[string]string{"a": "cache", "b": "live"} {
		s := &corev1.Secret{}
		if err := r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := string(s.Data["from"]); got != want {
			t.Errorf("%s: read from %s, want %s", name, got, want)
		}
	}
	if err := r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "none"}, &corev1.Secret{}); err == nil {
		t.Error("a missing Secret was found")
	}
}
