package topology

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestDryRun(t *testing.T) {
	marked := &metav1.ObjectMeta{Annotations: map[string]string{clusterv1.TopologyDryRunAnnotation: ""}}
	request := func(dryRun bool) context.Context {
		return admission.NewContextWithRequest(context.Background(),
			admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{DryRun: ptr.To(dryRun)}})
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		obj  metav1.Object
		want bool
	}{
		{"topology dry-run", request(true), marked, true},
		{"dry-run of someone else", request(true), &metav1.ObjectMeta{}, false},
		{"real update carrying the annotation", request(false), marked, false},
		{"no admission request", context.Background(), marked, false},
	} {
		if got := DryRun(tc.ctx, tc.obj); got != tc.want {
			t.Errorf("%s: DryRun = %v, want %v", tc.name, got, tc.want)
		}
	}
}
