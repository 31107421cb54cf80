package hyperv

import (
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
)

// lent refuses a create that would use what the cluster's identity does not lend (its
// spec.allowed): folders, switches, the parent disk or its source, VLANs. Hosts with a Secret of
// their own lend what their account may do; a cluster that borrows an identity for any host
// follows the identity's lists. Deleting and reading a VM are never refused here, so a VM made
// before the lists changed can still be removed.
func (b *backend) lent() error {
	for _, cfg := range b.hosts {
		if cfg.Lent == nil {
			continue
		}
		return lentError(append(lend.HyperVCluster(cfg.Identity, cfg.Lent, &b.cluster.Spec), lend.HyperVMachine(cfg.Identity, cfg.Lent, &b.m.Spec)...))
	}
	return nil
}

// lentCluster refuses probing a host (which creates the cluster's folders) of a cluster whose
// folders or switches its identity does not lend.
func lentCluster(cfg HostConfig, hc *infrav1.HyperVCluster) error {
	if cfg.Lent == nil {
		return nil
	}
	return lentError(lend.HyperVCluster(cfg.Identity, cfg.Lent, &hc.Spec))
}

func lentError(refusals []*lend.Refusal) error {
	if len(refusals) == 0 {
		return nil
	}
	return hypervisor.Errorf(infrav1.ResourceNotLentReason, "%v", refusals[0])
}
