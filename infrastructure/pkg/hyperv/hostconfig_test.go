package hyperv

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestHostConfigs reads each host's login from its own Secret, or from the cluster's
// spec.credentialsRef when the host names none (as the hyperv-windows flavors write it).
func TestHostConfigs(t *testing.T) {
	secret := func(name, user string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Data: map[string][]byte{"username": []byte(user), "password": []byte("pw")}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithObjects(secret("win1-hyperv", "cluster-user"), secret("own", "host-user")).Build()
	hc := &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "win1"}}
	hc.Spec.CredentialsRef = infrav1.HyperVIdentityReference{Name: "win1-hyperv"}
	hc.Spec.Hosts = []infrav1.HyperVHost{
		{Name: "hv1", Address: "hv1.example.com"},
		{Name: "hv2", Address: "hv2.example.com", CredentialsRef: infrav1.SecretReference{Name: "own"}},
	}
	cfgs, err := (&Provider{Client: c}).HostConfigs(context.Background(), hc)
	if err != nil {
		t.Fatal(err)
	}
	if cfgs["hv1"].Username != "cluster-user" || cfgs["hv2"].Username != "host-user" {
		t.Fatalf("usernames: hv1 %q, hv2 %q", cfgs["hv1"].Username, cfgs["hv2"].Username)
	}
}
