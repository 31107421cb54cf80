package addons

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/test/envtest"
)

// TestDryRun applies every addon object with server-side dry run against a real kube-apiserver:
// built-in schemas and validation (DaemonSets, Jobs, RBAC, RuntimeClasses...). The objects are
// all built-in kinds; Calico's CRD kinds (Installation, APIServer) are data of a ConfigMap here
// and their CRDs are not ours to ship, so the Job's apply is not exercised. The wrappers are
// dry-run too: the ClusterResourceSet CRD is among CAPI's, which the project's envtest installs.
// The ServiceMonitor (the Prometheus Operator's CRD) is checked by a strict decode only.
func TestDryRun(t *testing.T) {
	g := NewWithT(t)
	env, err := envtest.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()

	apply := func(u *unstructured.Unstructured) error {
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.DryRunAll, client.FieldOwner("addons-test"), client.ForceOwnership)
	}
	// Dry run creates nothing, so the addons' namespaces are created for real first.
	ensureNamespace := func(name string) {
		err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		g.Expect(err == nil || apierrors.IsAlreadyExists(err)).To(BeTrue(), "namespace %s: %v", name, err)
	}

	ensureNamespace("addons-test")
	for _, sel := range Selections() {
		for _, vars := range []map[string]string{nil, overrides, credentials} {
			for _, name := range names(t, sel) {
				objs := decode(t, processedManifests(t, sel, name, vars))
				for _, o := range objs {
					if o.u.GetKind() == "Namespace" {
						ensureNamespace(o.u.GetName())
					}
				}
				for _, o := range objs {
					if o.u.GroupVersionKind() == serviceMonitorGVK {
						continue // the Prometheus Operator's CRD is not ours to ship (servicemonitor_test.go checks it)
					}
					g.Expect(apply(o.u)).To(Succeed(), "%+v %s: %s %s/%s", sel, name, o.u.GetKind(), o.u.GetNamespace(), o.u.GetName())
				}
			}
		}
		text, err := ClusterResourceSets(sel)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range decode(t, process(t, text, nil)) {
			o.u.SetNamespace("addons-test")
			g.Expect(apply(o.u)).To(Succeed(), "%+v: %s %s", sel, o.u.GetKind(), o.u.GetName())
		}
	}
}
