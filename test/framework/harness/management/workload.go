package management

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/capwin/capwin/test/framework/harness/workload"
)

// StoreWorkloadSecrets writes the Secrets a control plane provider (KCP) keeps for a Cluster:
// <cluster>-kubeconfig (admin kubeconfig; CAPI's and capwin's ClusterCaches connect with it)
// and <cluster>-ca (the CA the bootstrap provider pins in the join parameters), both of w.
func (m *Management) StoreWorkloadSecrets(ctx context.Context, c *clusterv1.Cluster, w *workload.Cluster) error {
	for purpose, data := range map[secret.Purpose]map[string][]byte{
		secret.Kubeconfig: {secret.KubeconfigDataName: w.KubeConfig},
		secret.ClusterCA:  {secret.TLSCrtDataName: w.CACert, secret.TLSKeyDataName: w.CAKey},
	} {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: secret.Name(c.Name, purpose), Namespace: c.Namespace,
				Labels: map[string]string{clusterv1.ClusterNameLabel: c.Name},
			},
			Type: clusterv1.ClusterSecretType,
			Data: data,
		}
		if err := m.Client.Create(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
