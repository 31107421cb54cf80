package hyperv

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// place chooses the host of a new VM: the pinned host; else, among the hosts of the Machine's
// failure domain (or all hosts) that are available and, for a machine with spec.gpu, have a free
// GPU of its kind as last probed, the one with the fewest VMs of the same MachineDeployment, then
// the most free memory, then by name. create.ps1 checks the GPU again on the host.
func (b *backend) place(ctx context.Context, s *hypervisor.Scope) (string, error) {
	if pin := b.m.Spec.Host; pin != "" {
		if _, ok := b.hosts[pin]; !ok {
			return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.host %q is not one of the HyperVCluster's hosts", pin)
		}
		return pin, nil
	}
	fd := s.Machine.Spec.FailureDomain
	status := map[string]infrav1.HyperVHostStatus{}
	for _, h := range b.cluster.Status.Hosts {
		status[h.Name] = h
	}
	spread, err := b.spread(ctx, s)
	if err != nil {
		return "", err
	}
	var candidates []string
	gpu, noGPU := b.m.Spec.GPU, 0
	for _, h := range b.cluster.Spec.Hosts {
		if fd != "" && h.FailureDomain != fd {
			continue
		}
		if st, known := status[h.Name]; known && !st.Available {
			continue
		}
		if !hasFreeGPU(status[h.Name].GPU, gpu) {
			noGPU++
			continue
		}
		candidates = append(candidates, h.Name)
	}
	if len(candidates) == 0 && noGPU > 0 {
		return "", hypervisor.Errorf(infrav1.NoGPUAvailableReason,
			"none of the %d available hosts (failure domain %q) has %s (see the HyperVCluster's status.hosts[].gpu): capwin places the machine once a host has one; free a GPU or add one (docs/hyperv.md, GPUs)",
			noGPU, fd, gpuWords(gpu))
	}
	if len(candidates) == 0 {
		return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "no available host in failure domain %q (see the HyperVCluster's status.hosts)", fd)
	}
	sort.Slice(candidates, func(i, j int) bool {
		a, c := candidates[i], candidates[j]
		if spread[a] != spread[c] {
			return spread[a] < spread[c]
		}
		if status[a].FreeMemoryMiB != status[c].FreeMemoryMiB {
			return status[a].FreeMemoryMiB > status[c].FreeMemoryMiB
		}
		return a < c
	})
	return candidates[0], nil
}

// spread counts, per host, the VMs of the machine's MachineDeployment (or of the cluster's
// machines when it has none): from the cache, plus the hosts this manager chose in the last
// minute that the cache may not show yet.
func (b *backend) spread(ctx context.Context, s *hypervisor.Scope) (map[string]int, error) {
	md := s.Machine.Labels[clusterv1.MachineDeploymentNameLabel]
	labels := client.MatchingLabels{clusterv1.ClusterNameLabel: s.Cluster.Name}
	if md != "" {
		labels[clusterv1.MachineDeploymentNameLabel] = md
	}
	list := &infrav1.HyperVMachineList{}
	ns := s.InfraMachine.GetNamespace()
	if err := b.p.Client.List(ctx, list, client.InNamespace(ns), labels, client.UnsafeDisableDeepCopy); err != nil { // read only
		return nil, fmt.Errorf("place the VM: list the HyperVMachines of cluster %s/%s: %w", ns, s.Cluster.Name, err)
	}
	hostOf := map[types.UID]string{}
	for _, m := range list.Items {
		if m.Status.VM.Host != "" {
			hostOf[m.UID] = m.Status.VM.Host
		}
	}
	b.p.placed.Range(func(k, v any) bool {
		p := v.(placement)
		switch {
		case time.Since(p.at) > time.Minute:
			b.p.placed.Delete(k)
		case p.cluster == s.Cluster.Name && p.namespace == ns && p.deployment == md:
			if _, known := hostOf[k.(types.UID)]; !known {
				hostOf[k.(types.UID)] = p.host
			}
		}
		return true
	})
	delete(hostOf, s.InfraMachine.GetUID())
	out := map[string]int{}
	for _, h := range hostOf {
		out[h]++
	}
	return out, nil
}

// remember records the host chosen for a machine.
func (b *backend) remember(s *hypervisor.Scope, host string) {
	b.p.placed.Store(s.InfraMachine.GetUID(), placement{host: host, cluster: s.Cluster.Name, namespace: s.InfraMachine.GetNamespace(),
		deployment: s.Machine.Labels[clusterv1.MachineDeploymentNameLabel], at: time.Now()})
}
