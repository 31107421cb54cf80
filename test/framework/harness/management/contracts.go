package management

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/cluster-api/feature"
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

// StartForClients starts the harness as clusterctl and kubectl find a management cluster that
// clusterctl init made: ClusterTopology on (CLUSTER_TOPOLOGY=true), the CRDs' contract labels,
// and an admin kubeconfig written to kubeconfig. Its controllers reconcile only objects with the
// watch-filter label watchFilter, so what a client applies stays as applied; its webhooks
// (CAPI's and capwin's) see every request.
func StartForClients(ctx context.Context, watchFilter, kubeconfig string) (_ *Management, retErr error) {
	if err := feature.MutableGates.Set(string(feature.ClusterTopology) + "=true"); err != nil {
		return nil, err
	}
	m, err := Start(ctx, Options{WatchFilter: watchFilter})
	if err != nil {
		return nil, fmt.Errorf("management cluster: %w", err)
	}
	defer func() {
		if retErr != nil {
			_ = m.Stop()
		}
	}()
	if err := m.LabelContracts(ctx); err != nil {
		return nil, fmt.Errorf("CRD contract labels: %w", err)
	}
	if err := m.Env.WriteAdminKubeconfig(watchFilter, kubeconfig); err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return m, nil
}
