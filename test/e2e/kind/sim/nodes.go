//go:build e2e

package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
)

// createNamespaces creates what every cluster starts with.
func (s *sim) createNamespaces(ctx context.Context, c inmemoryruntime.Client) error {
	for _, name := range []string{metav1.NamespaceDefault, metav1.NamespacePublic, metav1.NamespaceSystem, corev1.NamespaceNodeLease} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/metadata.name": name}}}
		if err := createIfMissing(ctx, c, ns); err != nil {
			return err
		}
	}
	return nil
}

// createNode registers a Node as its kubelet would, without spec.providerID: no cloud provider
// runs, so capwin's infrastructure provider links Node and Machine (guest.LinkNode).
func createNode(ctx context.Context, c inmemoryruntime.Client, n *corev1.Node) error {
	return createIfMissing(ctx, c, n)
}

// nodeDown is a powered-off guest's Node: NotReady once its kubelet stops posting status,
// gone once its VM is deleted.
func (s *sim) nodeDown(ctx context.Context, c inmemoryruntime.Client, name string, vmDeleted bool) error {
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		return client.IgnoreNotFound(err)
	}
	if vmDeleted {
		return client.IgnoreNotFound(c.Delete(ctx, n))
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = corev1.ConditionUnknown
			n.Status.Conditions[i].Reason = "NodeStatusUnknown"
			n.Status.Conditions[i].Message = "Kubelet stopped posting node status."
			n.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	return client.IgnoreNotFound(c.Update(ctx, n))
}

// nodeStatus is a healthy kubelet's report.
func nodeStatus(g *guest, os, osImage, kubeletVersion string) corev1.NodeStatus {
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: g.address},
			{Type: corev1.NodeHostName, Address: g.node},
		},
		NodeInfo: corev1.NodeSystemInfo{
			OperatingSystem: os, Architecture: "amd64", OSImage: osImage,
			KubeletVersion: kubeletVersion, ContainerRuntimeVersion: "containerd://2.1.4",
		},
	}
}

// createIfMissing creates o unless an object of that name exists.
func createIfMissing(ctx context.Context, c inmemoryruntime.Client, o client.Object) error {
	if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
