package management

import (
	"context"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// contractLabel is the label by which Cluster API finds the contract version of a CRD.
const contractLabel = "cluster.x-k8s.io/v1beta2"

// LabelContracts gives CAPI's kubeadm CRDs the contract label that their release components
// carry (the harness installs the bare CRD bases); clusterctl and the ClusterClass controller
// resolve template API versions by it, as on a management cluster that clusterctl init made.
func (m *Management) LabelContracts(ctx context.Context) error {
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := m.Client.List(ctx, &crds); err != nil {
		return err
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if _, ok := crd.Labels[contractLabel]; ok || !strings.HasSuffix(crd.Spec.Group, ".cluster.x-k8s.io") {
			continue
		}
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels[contractLabel] = "v1beta2"
		if err := m.Client.Patch(ctx, crd, patch); err != nil {
			return err
		}
	}
	return nil
}
