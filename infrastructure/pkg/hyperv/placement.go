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

// choose is the host of the machine's VM: the host where Find saw its interrupted create, else the
// host recorded in its status while that host can still take it (a restarted manager keeps the
// placement, and a parent disk copy under way), else a new placement. Choosing and remembering
// are one step, so concurrent creates see each other's choice.
func (b *backend) choose(ctx context.Context, s *hypervisor.Scope) (string, error) {
	b.p.placeMu.Lock()
	defer b.p.placeMu.Unlock()
	host, err := b.resume, error(nil)
	if host == "" {
		host = b.recorded(s)
	}
	if host == "" {
		host, err = b.place(ctx, s)
	}
	if err == nil {
		b.remember(s, host)
	}
	return host, err
}

// recorded is the host in the machine's status when it is still a candidate for it, else "".
func (b *backend) recorded(s *hypervisor.Scope) string {
	host := s.InfraMachine.GetMachineStatus().VM.Host
	if host == "" || b.m.Spec.Host != "" {
		return ""
	}
	for _, h := range b.cluster.Spec.Hosts {
		if h.Name == host {
			if fits, _ := b.fits(s, h, b.hostStatus()); fits {
				return host
			}
		}
	}
	return ""
}

// place chooses the host of a new VM: the pinned host; else, among the hosts that fit it (fits),
// the one with the fewest VMs of the same MachineDeployment, then the most free memory, then by
// name. create.ps1 checks the GPU again on the host.
func (b *backend) place(ctx context.Context, s *hypervisor.Scope) (string, error) {
	if pin := b.m.Spec.Host; pin != "" {
		if _, ok := b.hosts[pin]; !ok {
			return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.host %q is not one of the HyperVCluster's hosts", pin)
		}
		return pin, nil
	}
	fd := s.Machine.Spec.FailureDomain
	status := b.hostStatus()
	spread, err := b.spread(ctx, s)
	if err != nil {
		return "", err
	}
	var candidates []string
	gpu, noGPU := b.m.Spec.GPU, 0
	for _, h := range b.cluster.Spec.Hosts {
		fits, gpuMissing := b.fits(s, h, status)
		if gpuMissing {
			noGPU++
		}
		if fits {
			candidates = append(candidates, h.Name)
		}
	}
	if len(candidates) == 0 && noGPU > 0 {
		return "", hypervisor.Errorf(infrav1.NoGPUAvailableReason,
			"none of the %d available hosts (failure domain %q) has %s (see the HyperVCluster's status.hosts[].gpu): capwin places the machine once a host has one; free a GPU or add one (docs/gpus.md, Hyper-V)",
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

// hostStatus is the HyperVCluster's status of each host, by name.
func (b *backend) hostStatus() map[string]infrav1.HyperVHostStatus {
	status := map[string]infrav1.HyperVHostStatus{}
	for _, h := range b.cluster.Status.Hosts {
		status[h.Name] = h
	}
	return status
}

// fits reports whether host h can take the machine's VM: in the Machine's failure domain (when it
// has one), available, and, for a machine with spec.gpu, with a free GPU of its kind as last
// probed (gpuMissing when only that is lacking).
func (b *backend) fits(s *hypervisor.Scope, h infrav1.HyperVHost, status map[string]infrav1.HyperVHostStatus) (fits, gpuMissing bool) {
	if fd := s.Machine.Spec.FailureDomain; fd != "" && h.FailureDomain != fd {
		return false, false
	}
	if st, known := status[h.Name]; known && !st.Available {
		return false, false
	}
	if !hasFreeGPU(status[h.Name].GPU, b.m.Spec.GPU) {
		return false, true
	}
	return true, false
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
