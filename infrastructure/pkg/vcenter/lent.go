package vcenter

import (
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
)

// lent is what a cluster identity lends to a cluster that borrows its login.
type lent struct {
	identity string
	allowed  *infrav1.VCenterAllowed
}

// check refuses a clone that uses vCenter objects the identity does not lend (nil lent: the
// cluster's own login, which lends what its account may do). Reading and deleting VMs are never
// refused here, so a VM made before the lists changed can still be removed.
func (l *lent) check(p lend.VCenterPaths) error {
	if l == nil {
		return nil
	}
	if refusals := lend.VCenterPlacement(l.identity, l.allowed, p); len(refusals) > 0 {
		return hypervisor.Errorf(infrav1.ResourceNotLentReason, "%v", refusals[0])
	}
	return nil
}

// checkTemplate refuses reading a template the identity does not lend.
func (l *lent) checkTemplate(path, library string) error {
	if l == nil {
		return nil
	}
	for _, r := range lend.VCenterPlacement(l.identity, l.allowed, lend.VCenterPaths{Template: path, Library: library}) {
		if r.Field == "spec.template" || r.Field == "spec.contentLibrary" {
			return hypervisor.Errorf(infrav1.ResourceNotLentReason, "%v", r)
		}
	}
	return nil
}
