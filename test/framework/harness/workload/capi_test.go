package workload

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
)

// checkCAPICredentials checks what CAPI does with the cluster's Secrets: the admin kubeconfig
// (<cluster>-kubeconfig) works, and a kubeconfig CAPI mints from CACert/CAKey (<cluster>-ca, as
// KCP does when it creates or rotates <cluster>-kubeconfig) is accepted by the apiserver.
func checkCAPICredentials(t *testing.T, c *Cluster) {
	t.Helper()
	admin, err := clientcmd.RESTConfigFromKubeConfig(c.KubeConfig)
	if err != nil {
		t.Fatal(err)
	}
	canList(t, "KubeConfig", admin)

	caCert, err := certs.DecodeCertPEM(c.CACert)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := certs.DecodePrivateKeyPEM(c.CAKey)
	if err != nil {
		t.Fatal(err)
	}
	minted, err := kubeconfig.New("workload", "https://"+c.Endpoint, caCert, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*minted, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	canList(t, "CAPI-minted kubeconfig", cfg)
}

func canList(t *testing.T, what string, cfg *rest.Config) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("%s: list namespaces: %v", what, err)
	}
}
