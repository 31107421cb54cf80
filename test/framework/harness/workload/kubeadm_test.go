package workload

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// checkKubeadmInit checks what a joining node meets before it has a credential: cluster-info is
// readable anonymously (kubeadm's RBAC) but kubeadm-config is not, and bootstrap token
// authentication is on (an unknown token is rejected instead of being ignored).
func checkKubeadmInit(t *testing.T, c *Cluster) {
	t.Helper()
	ctx := t.Context()
	anonymous := &rest.Config{Host: c.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: c.CACert}}
	cs := kubernetes.NewForConfigOrDie(anonymous)
	info, err := cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, ClusterInfoConfigMap, metav1.GetOptions{})
	if err != nil || info.Data["kubeconfig"] == "" {
		t.Errorf("anonymous read of cluster-info: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, KubeadmConfigConfigMap, metav1.GetOptions{}); err == nil {
		t.Error("anonymous users can read kubeadm-config")
	}
	unknown := rest.CopyConfig(anonymous)
	unknown.BearerToken = "abcdef.0123456789abcdef"
	_, err = kubernetes.NewForConfigOrDie(unknown).CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, ClusterInfoConfigMap, metav1.GetOptions{})
	if err == nil {
		t.Error("an unknown bootstrap token was accepted")
	}
}
