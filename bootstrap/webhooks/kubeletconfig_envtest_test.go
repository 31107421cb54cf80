package webhooks_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

func kubeletConfiguration(json string) func(*bootstrapv1.WindowsConfigSpec) {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.KubeletConfiguration = &runtime.RawExtension{Raw: []byte(json)}
	}
}

// TestKubeletConfigurationAdmission: the API server keeps the object as given (the schema
// preserves its fields), the CRD refuses what is no object, and the webhook names a field the
// kubelet does not know, or one Windows lacks, at its path.
func TestKubeletConfigurationAdmission(t *testing.T) {
	g := apiServer(t)
	ctx := context.Background()
	const patch = `{"maxPods": 60, "systemReserved": {"memory": "1Gi"}, "evictionHard": {"memory.available": "600Mi"}}`
	c := config("kubelet-config", kubeletConfiguration(patch))
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	stored := &bootstrapv1.WindowsConfig{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), stored)).To(Succeed())
	g.Expect(stored.Spec.KubeletConfiguration.Raw).To(MatchJSON(patch), "unknown fields are preserved, not pruned")

	expectInvalid(g, k8s.Create(ctx, config("kubelet-unknown", kubeletConfiguration(`{"maxPods": 60, "fooBar": true}`))),
		"spec.kubeletConfiguration.fooBar", "unknown field")
	expectInvalid(g, k8s.Create(ctx, config("kubelet-list", kubeletConfiguration(`[{"maxPods": 60}]`))),
		"spec.kubeletConfiguration", "must be of type object")

	tpl := template("kubelet-config")
	tpl.Spec.Template.Spec.KubeletConfiguration = &runtime.RawExtension{Raw: []byte(`{"cgroupDriver": "systemd"}`)}
	expectInvalid(g, k8s.Create(ctx, tpl), "spec.template.spec.kubeletConfiguration.cgroupDriver", "Windows has no cgroups")
}
