package loginsecret

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestProblem(t *testing.T) {
	controller := func(apiVersion, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", Controller: ptr.To(true)}}
	}
	for name, tc := range map[string]struct {
		secret corev1.Secret
		want   string // "" or a part of the problem
	}{
		"untyped":       {corev1.Secret{}, ""},
		"opaque":        {corev1.Secret{Type: corev1.SecretTypeOpaque}, ""},
		"basic-auth":    {corev1.Secret{Type: corev1.SecretTypeBasicAuth}, ""},
		"TLS key":       {corev1.Secret{Type: corev1.SecretTypeTLS}, "of type kubernetes.io/tls"},
		"token":         {corev1.Secret{Type: corev1.SecretTypeServiceAccountToken}, "service-account-token"},
		"docker config": {corev1.Secret{Type: corev1.SecretTypeDockerConfigJson}, "dockerconfigjson"},
		"another controller's": {corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: controller("cert-manager.io/v1", "Certificate")}},
			"managed by Certificate x"},
		"capwin's own, as controller": {corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			OwnerReferences: controller("infrastructure.cluster.x-k8s.io/v1beta1", "HyperVCluster")}}, ""},
		"an owner that is no controller": {corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "c"}}}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := Problem(&tc.secret)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("problem %q, want %q", got, tc.want)
			}
		})
	}
}

func TestForOtherUse(t *testing.T) {
	held := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "hosts", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "HyperVCluster", Name: "win"}}}}
	labelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "vc", Labels: map[string]string{Label: ""}}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "registry", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "win"}}}}
	if err := ForOtherUse(held, "guest credentials"); err == nil || !strings.Contains(err.Error(), "hypervisor login of HyperVCluster win") {
		t.Errorf("held: %v", err)
	}
	if err := ForOtherUse(labelled, "registry credentials"); err == nil || !strings.Contains(err.Error(), "cannot serve as registry credentials") {
		t.Errorf("labelled: %v", err)
	}
	if err := ForOtherUse(other, "registry credentials"); err != nil {
		t.Errorf("a Secret of the tenant's: %v", err)
	}
}
