package diagnostics

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/capwin/capwin/internal/guestos"
)

// Workload is what the workload cluster says about the Machine's Node.
type Workload struct {
	// Err is set when the workload cluster could not be read (no kubeconfig Secret yet,
	// unreachable apiserver).
	Err  error
	Node *corev1.Node
	// Events of the Node.
	Events []Event
}

// readWorkload finds the Machine's Node through the <cluster>-kubeconfig Secret: by the
// Machine's nodeRef, else by providerID or the name the guest registers with.
func readWorkload(ctx context.Context, c client.Client, s *Story) Workload {
	wc, err := WorkloadClient(ctx, c, s.Machine.Namespace, s.Machine.Spec.ClusterName)
	if err != nil {
		return Workload{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	node, err := findNode(ctx, wc, s)
	if err != nil || node == nil {
		return Workload{Err: err}
	}
	w := Workload{Node: node}
	w.Events, _ = events(ctx, wc, node) // a Node's events are extra; their absence is no error
	return w
}

// WorkloadClient is a client of the workload cluster of Cluster namespace/cluster, from its
// <cluster>-kubeconfig Secret in the management cluster c, with c's scheme.
func WorkloadClient(ctx context.Context, c client.Client, namespace, cluster string) (client.Client, error) {
	cfg, err := WorkloadConfig(ctx, c, namespace, cluster)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 10 * time.Second
	return client.New(cfg, client.Options{Scheme: c.Scheme()})
}

// WorkloadConfig is the REST configuration of the workload cluster of Cluster namespace/cluster,
// from its <cluster>-kubeconfig Secret in the management cluster c.
func WorkloadConfig(ctx context.Context, c client.Client, namespace, cluster string) (*rest.Config, error) {
	kc, err := secret.GetFromNamespacedName(ctx, c, client.ObjectKey{Namespace: namespace, Name: cluster}, secret.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("workload cluster kubeconfig Secret %s-kubeconfig: %w", cluster, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc.Data[secret.KubeconfigDataName])
	if err != nil {
		return nil, fmt.Errorf("workload cluster kubeconfig Secret %s-kubeconfig: %w", cluster, err)
	}
	return cfg, nil
}

func findNode(ctx context.Context, wc client.Client, s *Story) (*corev1.Node, error) {
	node := &corev1.Node{}
	if name := s.Machine.Status.NodeRef.Name; name != "" {
		if err := wc.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return node, nil
	}
	if s.Infra == nil {
		return nil, nil
	}
	nodes := &corev1.NodeList{}
	if err := wc.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("list Nodes of the workload cluster: %w", err)
	}
	providerID := *s.Infra.GetProviderID()
	name := guestos.NodeName(s.Infra.GetMachineStatus().ComputerName)
	for i, n := range nodes.Items {
		if (providerID != "" && n.Spec.ProviderID == providerID) || (name != "" && n.Name == name) {
			return &nodes.Items[i], nil
		}
	}
	return nil, nil
}
