package guest

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProviderID is the vSphere cloud provider's format, so the vSphere CPI and capwin agree.
func ProviderID(biosUUID string) string {
	if biosUUID == "" {
		return ""
	}
	return "vsphere://" + strings.ToLower(biosUUID)
}

// LinkNode sets spec.providerID on the workload cluster's Node when no cloud provider did, so
// CAPI can match Node and Machine. It reports whether the Node carries providerID now. A Node
// that carries a different providerID is left alone and reported as an error: two machines must
// never claim one Node.
func LinkNode(ctx context.Context, c client.Client, nodeName, providerID string) (bool, error) {
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("read Node %s: %w", nodeName, err)
	}
	switch node.Spec.ProviderID {
	case providerID:
		return true, nil
	case "":
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.ProviderID = providerID
		if err := c.Patch(ctx, node, patch); err != nil {
			return false, fmt.Errorf("set providerID of Node %s: %w", nodeName, err)
		}
		return true, nil
	default:
		return false, fmt.Errorf("node %s has providerID %s, not %s", nodeName, node.Spec.ProviderID, providerID)
	}
}
