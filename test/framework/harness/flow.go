package harness

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The steps of the demo and the scenario tests: each acts like a user, then waits for the
// outcome in the management cluster, the workload cluster and the hypervisor.

// Progress receives human-readable progress lines.
type Progress func(format string, args ...any)

// Build is the node.kubernetes.io/windows-build of an image ("10.0.20348").
func Build(image string) string { return fmt.Sprintf("10.0.%d", Images[image].Build) }

// WaitWorkers waits until exactly n Machines exist and are Ready, n VMs exist and n Windows
// Nodes of the image's build are Ready (counts over the whole Cluster, so call it when one
// MachineDeployment is the only one, or pass the total).
func (h *Harness) WaitWorkers(ctx context.Context, what string, n int, image string, timeout time.Duration, p Progress) (Snapshot, error) {
	build := Build(image)
	return h.WaitFor(ctx, what, timeout, func(s Snapshot) bool {
		return s.Machines == n && s.MachinesReady == n && s.VMs == n && s.NodesReady[build] == n && s.ReadyNodes() == n && s.Nodes == n
	}, func(s Snapshot) { p("  %s", s) })
}

// WaitApp waits until the app has n Running and Ready pods.
func (h *Harness) WaitApp(ctx context.Context, name string, n int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		_, got, err := h.AppPods(ctx, name)
		if err == nil && got == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("app %s: %d of %d pods running after %s (last error: %v)", name, got, n, timeout, err) //nolint:errorlint // shown, not wrapped: err is nil when the pods were listed but too few run
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// DeleteCluster deletes the Cluster and waits until it is gone, with no VM, disk, config drive
// or bootstrap token left.
func (h *Harness) DeleteCluster(ctx context.Context, timeout time.Duration, p Progress) (Snapshot, error) {
	c := h.Management.Client
	if err := client.IgnoreNotFound(c.Delete(ctx, h.clusterObject())); err != nil {
		return Snapshot{}, err
	}
	return h.WaitFor(ctx, "cluster deleted", timeout, func(s Snapshot) bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: ClusterName}, &clusterv1.Cluster{})
		return client.IgnoreNotFound(err) == nil && err != nil && s.Machines == 0 && s.VMs == 0 && s.Files == 0 && s.Rules == 0 && s.Tagged == 0 && s.Tokens == 0
	}, func(s Snapshot) {
		p("  %s · files %d · rules %d · tagged %d · bootstrap tokens %d", s, s.Files, s.Rules, s.Tagged, s.Tokens)
	})
}
