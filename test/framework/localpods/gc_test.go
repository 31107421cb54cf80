package localpods_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/localpods"
)

// TestGarbageCollector: on a real API server with capwin's and Cluster API's CRDs, a sweep deletes
// a Secret whose owner (a ConfigMap, then a custom resource) is gone or has another UID, keeps one
// whose owner exists and one without owners, and deletes the next dependents once their owner is
// deleted: what kube-controller-manager does and an envtest cluster does not.
func TestGarbageCollector(t *testing.T) {
	env, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := t.Context()
	ns := "gc"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(kind, apiVersion, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}}
	}
	secret := func(name string, owners []metav1.OwnerReference) {
		t.Helper()
		_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	secret("owned", ref("ConfigMap", "v1", "owner", owner.UID))
	secret("orphan", ref("ConfigMap", "v1", "deleted-long-ago", "0000"))
	secret("old-owner", ref("ConfigMap", "v1", "owner", "1111"))                       // a ConfigMap made again under the name
	secret("cluster-gone", ref("Cluster", "cluster.x-k8s.io/v1beta1", "win1", "2222")) // another served version of the kind
	secret("no-owner", nil)

	gc, err := localpods.NewGarbageCollector(env.Config, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := gc.Sweep(ctx); err != nil || n != 3 {
		t.Fatalf("first sweep deleted %d, %v; want 3", n, err)
	}
	want(ctx, t, cs, ns, map[string]bool{"owned": true, "orphan": false, "old-owner": false, "cluster-gone": false, "no-owner": true})
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := gc.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("second sweep deleted %d, %v; want 1", n, err)
	}
	want(ctx, t, cs, ns, map[string]bool{"owned": false, "no-owner": true})
}

func want(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, exists map[string]bool) {
	t.Helper()
	for name, ok := range exists {
		_, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if got := err == nil; got != ok || (err != nil && !apierrors.IsNotFound(err)) {
			t.Errorf("Secret %s exists = %v (%v), want %v", name, got, err, ok)
		}
	}
}
