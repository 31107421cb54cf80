package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/test/framework/harness"
)

// waitCluster waits until the Cluster's infrastructure is provisioned, its control plane
// initialized and CAPI reaches the workload apiserver (condition RemoteConnectionProbe), so the
// create phase measures machines only.
func (b *bench) waitCluster(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	key := client.ObjectKey{Namespace: harness.Namespace, Name: harness.ClusterName}
	for {
		c := &clusterv1.Cluster{}
		err := b.h.Management.Client.Get(ctx, key, c)
		if err == nil && ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) &&
			ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) &&
			meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1.ClusterRemoteConnectionProbeCondition) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ready: %w (last error: %v)", ctx.Err(), err) //nolint:errorlint // shown, not wrapped: err is nil when the Cluster was read but is not ready yet
		case <-time.After(100 * time.Millisecond):
		}
	}
}
