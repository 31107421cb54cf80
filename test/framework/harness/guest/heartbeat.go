package guest

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// leaseDurationSeconds is the kubelet's nodeLeaseDurationSeconds.
const leaseDurationSeconds = 40

// heartbeat renews the node's Lease every HeartbeatInterval and rewrites the node status when
// it is stale or no longer Ready (the controller-manager's node lifecycle controller marks a Node
// Unknown when its Lease stops being renewed; that is how a powered-off guest looks).
func (k *kubelet) heartbeat(ctx context.Context) {
	t := time.NewTicker(k.g.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		k.renewLease(ctx)
		k.syncNodeStatus(ctx)
	}
}

// renewLease updates the Lease it holds, and reads or creates it only when it has none (at
// start, or after a failed update).
func (k *kubelet) renewLease(ctx context.Context) {
	leases := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	var err error
	if k.lease == nil {
		k.lease, err = leases.Get(ctx, k.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			k.lease, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: k.name, Namespace: corev1.NamespaceNodeLease, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: k.name, UID: k.nodeUID,
				}}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(k.name), LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds), RenewTime: &now},
			}, metav1.CreateOptions{})
			if err == nil {
				return
			}
		}
	}
	if err == nil {
		k.lease.Spec.RenewTime = &now
		k.lease, err = leases.Update(ctx, k.lease, metav1.UpdateOptions{})
	}
	if err != nil {
		k.lease = nil
		if ctx.Err() == nil {
			k.g.cfg.Log.V(1).Info("kubelet: failed to renew the node lease", "err", err.Error())
		}
	}
}

func (k *kubelet) syncNodeStatus(ctx context.Context) {
	node, err := k.client.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{})
	if err != nil {
		if ctx.Err() == nil {
			k.g.cfg.Log.V(1).Info("kubelet: cannot read its Node", "err", err.Error())
		}
		return
	}
	if isReady(node) && time.Since(k.lastStatus) < nodeStatusReportInterval {
		return
	}
	if err := k.patchStatus(ctx, &node.Status); err != nil && ctx.Err() == nil {
		k.g.cfg.Log.V(1).Info("kubelet: node status update failed", "err", err.Error())
	}
}
