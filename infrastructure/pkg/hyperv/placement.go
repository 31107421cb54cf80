package hyperv

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

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
// machines when it has none), as the HyperVMachine informer shows them, plus the hosts this
// manager chose in the last minute that no status shows yet.
func (b *backend) spread(ctx context.Context, s *hypervisor.Scope) (map[string]int, error) {
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return b.p.Placements.Synced(), nil
	}); err != nil {
		return nil, fmt.Errorf("place the VM: wait for the HyperVMachine informer's VMs per host: %w", err)
	}
	return b.p.Placements.Spread(b.group(s), s.InfraMachine.GetUID(), time.Now()), nil
}

// group is the placement group of the machine: the labels of its Machine, in its namespace.
func (b *backend) group(s *hypervisor.Scope) group {
	g := groupOf(s.InfraMachine.GetNamespace(), s.Machine.Labels)
	g.cluster = s.Cluster.Name
	return g
}

// remember records the host chosen for a machine.
func (b *backend) remember(s *hypervisor.Scope, host string) {
	b.p.Placements.Choose(s.InfraMachine.GetUID(), b.group(s), host, time.Now())
}
