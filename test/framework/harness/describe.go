package harness

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Describe returns the Machines' not-true conditions and the Nodes, for a failure message.
func (h *Harness) Describe(ctx context.Context) string {
	var b strings.Builder
	machines := &clusterv1.MachineList{}
	if err := h.Management.Client.List(ctx, machines, client.InNamespace(Namespace)); err != nil {
		return err.Error()
	}
	for _, m := range machines.Items {
		fmt.Fprintf(&b, "Machine %s providerID=%q node=%q deleting=%v\n", m.Name, m.Spec.ProviderID, m.Status.NodeRef.Name, !m.DeletionTimestamp.IsZero())
		writeNotTrue(&b, m.Status.Conditions)
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := h.Management.Client.List(ctx, mds, client.InNamespace(Namespace)); err == nil {
		for _, md := range mds.Items {
			fmt.Fprintf(&b, "MachineDeployment %s replicas=%d/%d generation=%d observed=%d\n", md.Name, ptrValue(md.Status.Replicas), ptrValue(md.Spec.Replicas), md.Generation, md.Status.ObservedGeneration)
			writeNotTrue(&b, md.Status.Conditions)
		}
	}
	sets := &clusterv1.MachineSetList{}
	if err := h.Management.Client.List(ctx, sets, client.InNamespace(Namespace)); err == nil {
		for _, ms := range sets.Items {
			fmt.Fprintf(&b, "MachineSet %s replicas=%d/%d\n", ms.Name, ptrValue(ms.Status.Replicas), ptrValue(ms.Spec.Replicas))
			writeNotTrue(&b, ms.Status.Conditions)
		}
	}
	nodes := &corev1.NodeList{}
	if err := h.WorkloadClient.List(ctx, nodes); err != nil {
		return b.String() + err.Error()
	}
	for _, n := range nodes.Items {
		fmt.Fprintf(&b, "Node %s providerID=%q ready=%v build=%s\n", n.Name, n.Spec.ProviderID, nodeReady(&n), n.Labels[corev1.LabelWindowsBuild])
	}
	tokens := &corev1.SecretList{}
	if err := h.WorkloadClient.List(ctx, tokens, client.InNamespace(metav1.NamespaceSystem)); err == nil {
		for _, t := range tokens.Items {
			if t.Type == corev1.SecretTypeBootstrapToken {
				fmt.Fprintf(&b, "bootstrap token %s created %s expires %s\n", t.Name, t.CreationTimestamp.UTC().Format("15:04:05"), t.Data["expiration"])
			}
		}
	}
	for vm, err := range h.Guests.Failed() {
		fmt.Fprintf(&b, "guest %s failed: %v\n", vm, err)
	}
	return b.String()
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

// writeNotTrue writes the conditions that are not True, one per line.
func writeNotTrue(b *strings.Builder, conds []metav1.Condition) {
	for _, c := range conds {
		if c.Status != metav1.ConditionTrue {
			fmt.Fprintf(b, "  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
}
