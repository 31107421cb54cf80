package clusterctl_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestManagersRunRestricted: each provider's namespace enforces the restricted Pod Security
// Standard, and the manager's Pod (its Deployment's template, read-only root included) is admitted
// there by the API server's PodSecurity admission; the same Pod with its security context taken
// away is refused, so the admission really checks. The NetworkPolicy selects the manager's Pods and
// lets in only the webhook and metrics ports of its container.
func TestManagersRunRestricted(t *testing.T) {
	cfg := localRepo(t, nil)
	for _, p := range capwinProviders {
		t.Run(p.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			comp := components(ctx, g, cfg, p.name, p.typ)
			var deploy appsv1.Deployment
			var policy networkingv1.NetworkPolicy
			for _, o := range comp.Objs() {
				switch o.GetKind() {
				case "Namespace":
					g.Expect(o.GetLabels()).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
					g.Expect(apply(ctx, &o)).To(Succeed())
				case "Deployment":
					convert(g, &o, &deploy)
				case "NetworkPolicy":
					convert(g, &o, &policy)
				}
			}
			g.Expect(deploy.Name).NotTo(BeEmpty())
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "manager", Namespace: p.ns, Labels: deploy.Spec.Template.Labels},
				Spec: *deploy.Spec.Template.Spec.DeepCopy()}
			pod.Spec.ServiceAccountName = "" // the components were applied as a dry run: no ServiceAccount exists
			g.Expect(mgmt.Client.Create(ctx, pod.DeepCopy(), client.DryRunAll)).To(Succeed())
			container := pod.Spec.Containers[0]
			g.Expect(container.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
			loose := pod.DeepCopy()
			loose.Spec.SecurityContext, loose.Spec.Containers[0].SecurityContext = nil, nil
			err := mgmt.Client.Create(ctx, loose, client.DryRunAll)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted:latest"`))

			g.Expect(policy.Name).NotTo(BeEmpty(), "no NetworkPolicy")
			g.Expect(policy.Namespace).To(Equal(p.ns))
			sel, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sel.Matches(labels.Set(pod.Labels))).To(BeTrue(), "the policy does not select the manager")
			g.Expect(policy.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
			g.Expect(policy.Spec.Ingress).To(HaveLen(1))
			g.Expect(policy.Spec.Ingress[0].From).To(BeEmpty())
			var open []int32
			for _, port := range policy.Spec.Ingress[0].Ports {
				for _, cp := range container.Ports {
					if cp.Name == port.Port.StrVal {
						open = append(open, cp.ContainerPort)
					}
				}
			}
			g.Expect(open).To(ConsistOf(int32(9443), int32(8443)), "webhook and metrics ports only")
		})
	}
}

func convert(g Gomega, u *unstructured.Unstructured, into any) {
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)).To(Succeed())
}
