package envtest

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// PauseWhenDone pauses a test's Cluster when the test ends, so that its cluster and machines stop
// polling their VMs and hosts while the package's other tests run. A Cluster that is gone or being
// deleted is left as it is.
func PauseWhenDone(t testing.TB, c client.Client, cluster *clusterv1.Cluster) {
	t.Cleanup(func() {
		ctx := context.Background()
		for range 5 {
			cur := &clusterv1.Cluster{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), cur); err != nil ||
				!cur.DeletionTimestamp.IsZero() || ptr.Deref(cur.Spec.Paused, false) {
				return
			}
			cur.Spec.Paused = ptr.To(true)
			if err := c.Update(ctx, cur); !apierrors.IsConflict(err) {
				return
			}
		}
	})
}
