// Package prometheus checks the Prometheus Operator scrape examples
// (bootstrap/config/prometheus, infrastructure/config/prometheus) against the managers'
// components: the Service selects the manager Pod and its metrics port, the ServiceMonitor
// selects the Service, the binding names the ClusterRole that grants /metrics.
package prometheus

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capwin/capwin/internal/release"
	"github.com/capwin/capwin/internal/test/envtest"
)

func TestScrapeExamplesMatchTheManagers(t *testing.T) {
	for _, provider := range []string{"bootstrap", "infrastructure"} {
		t.Run(provider, func(t *testing.T) {
			g := NewWithT(t)
			root := envtest.RepoRoot()
			components := build(g, filepath.Join(root, provider, "config", "default"))
			scrape := build(g, filepath.Join(root, provider, "config", "prometheus"))

			deploy := &appsv1.Deployment{}
			convert(g, only(g, components, "Deployment"), deploy)
			svc := &corev1.Service{}
			convert(g, only(g, scrape, "Service"), svc)
			g.Expect(svc.Namespace).To(Equal(deploy.Namespace))
			for k, v := range svc.Spec.Selector {
				g.Expect(deploy.Spec.Template.Labels).To(HaveKeyWithValue(k, v), "the Service selects the manager Pod")
			}
			var ports []string
			for _, p := range deploy.Spec.Template.Spec.Containers[0].Ports {
				ports = append(ports, p.Name)
			}
			g.Expect(ports).To(ContainElement(svc.Spec.Ports[0].TargetPort.String()), "the Service targets the metrics port")

			monitor := only(g, scrape, "ServiceMonitor")
			g.Expect(monitor.GetNamespace()).To(Equal(svc.Namespace))
			match, _, err := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
			g.Expect(err).NotTo(HaveOccurred())
			for k, v := range match {
				g.Expect(svc.Labels).To(HaveKeyWithValue(k, v), "the ServiceMonitor selects the Service")
			}
			endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
			g.Expect(endpoints).To(HaveLen(1))
			g.Expect(endpoints[0]).To(HaveKeyWithValue("port", svc.Spec.Ports[0].Name))
			g.Expect(endpoints[0]).To(HaveKeyWithValue("scheme", "https"))

			role, binding := &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}
			convert(g, only(g, scrape, "ClusterRole"), role)
			convert(g, only(g, scrape, "ClusterRoleBinding"), binding)
			g.Expect(role.Rules).To(Equal([]rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}))
			g.Expect(binding.RoleRef.Name).To(Equal(role.Name))
		})
	}
}

func build(g Gomega, dir string) []unstructured.Unstructured {
	out, err := release.Kustomize(dir)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := utilyaml.ToUnstructured(out)
	g.Expect(err).NotTo(HaveOccurred())
	return objs
}

func only(g Gomega, objs []unstructured.Unstructured, kind string) *unstructured.Unstructured {
	var found []unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	g.Expect(found).To(HaveLen(1), "one %s", kind)
	return &found[0]
}

func convert(g Gomega, u *unstructured.Unstructured, into any) {
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)).To(Succeed())
}
