// Package topology holds what capwin's webhooks need to cooperate with CAPI's ClusterClass
// (managed topology) controller.
package topology

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/topology"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// DryRun reports a server-side dry-run by CAPI's topology controller. It computes whether a
// template changed by applying the desired template over the current one with dry-run; the
// immutability of templates applies to real updates only (a change makes it create a new
// template and rotate the reference), so template webhooks allow these requests.
func DryRun(ctx context.Context, obj metav1.Object) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && topology.IsDryRunRequest(req, obj)
}
