package benchutil

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DataLabel marks the bootstrap data Secrets a workload creates.
const DataLabel = "bench.capwin.io/bootstrap-data"

// DeleteMachinesAndData deletes the namespace's Machines and bootstrap data Secrets once their
// infrastructure machines are gone, as CAPI's Machine controller and the garbage collector do in
// a real cluster (envtest runs no garbage collector): what the manager's caches hold afterwards
// is what a cluster whose machines were deleted leaves.
func DeleteMachinesAndData(ctx context.Context, c client.Client, ns string) error {
	if err := c.DeleteAllOf(ctx, &clusterv1.Machine{}, client.InNamespace(ns)); err != nil {
		return err
	}
	return c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(ns), client.HasLabels{DataLabel})
}
