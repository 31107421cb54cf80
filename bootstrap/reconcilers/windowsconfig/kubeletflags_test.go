package windowsconfig_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// TestKubeletFlagTheMachinesKubeletLacksIsRefused: admission lets --pod-infra-container-image
// by (the v1.31 to v1.34 kubelets have it), but the v1.36.3 kubelet would exit with "unknown
// flag": no bootstrap token and no data are made, the condition says why and what to set
// instead, and once the flag is removed the data is written.
func TestKubeletFlagTheMachinesKubeletLacksIsRefused(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.spec.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "max-pods", Value: "60"},
		{Name: "pod-infra-container-image", Value: "registry.k8s.io/pause:3.10"}}
	f := newFixture(t, o)
	c := f.waitReason(t, bootstrapv1.KubeletFlagNotSupportedReason)
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Message).To(Equal("the v1.36 kubelet has no flag --pod-infra-container-image (the v1.34 kubelet had it): " +
		"containerd pulls the pause image of spec.containerd.pauseImage"))
	cfg := f.get(g)
	g.Expect(cfg.Finalizers).To(BeEmpty(), "no bootstrap token was made")
	err := k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.config.Name}, &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no bootstrap data Secret: %v", err)

	// The reconciler may still be writing the config (its status): an edit is read, changed and
	// written again on a conflict, as kubectl edit would be.
	g.Eventually(func(g Gomega) {
		cfg := f.get(g)
		cfg.Spec.NodeRegistration.KubeletExtraArgs = cfg.Spec.NodeRegistration.KubeletExtraArgs[:1]
		g.Expect(k8s.Update(ctx, cfg)).To(Succeed())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	f.dataSecret(t)
}
