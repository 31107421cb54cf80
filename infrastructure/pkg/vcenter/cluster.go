package vcenter

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/find"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// CheckCluster logs in with the VCenterCluster's identity and finds its datacenter and the
// placement of every failure domain. Errors carry a condition reason (LoginError, hypervisor.Error).
func (p *Provider) CheckCluster(ctx context.Context, vc *infrav1.VCenterCluster) error {
	sess, err := p.session(ctx, vc)
	if err != nil {
		return err
	}
	if _, err := datacenter(ctx, sess, vc.Spec.Datacenter); err != nil {
		return err
	}
	for _, fd := range vc.Spec.FailureDomains {
		if err := checkPlacement(ctx, sess, vc.Spec.Datacenter, fd.Placement); err != nil {
			return fmt.Errorf("failure domain %s: %w", fd.Name, err)
		}
	}
	return nil
}

func checkPlacement(ctx context.Context, sess *session.Session, defaultDC string, p infrav1.Placement) error {
	dcName := p.Datacenter
	if dcName == "" {
		dcName = defaultDC
	}
	dc, err := datacenter(ctx, sess, dcName)
	if err != nil {
		return err
	}
	f := find.NewFinder(sess.Client, false).SetDatacenter(dc)
	checks := []struct {
		what, name string
		look       func(context.Context, string) error
	}{
		{"resourcePool", p.ResourcePool, func(ctx context.Context, n string) error { _, err := f.ResourcePool(ctx, n); return err }},
		{"datastore", p.Datastore, func(ctx context.Context, n string) error { _, err := f.Datastore(ctx, n); return err }},
		{"folder", p.Folder, func(ctx context.Context, n string) error { _, err := f.Folder(ctx, n); return err }},
	}
	for _, c := range checks {
		if c.name == "" {
			continue
		}
		if err := c.look(ctx, c.name); err != nil {
			return notFound(c.what, c.name, sess.Check(err))
		}
	}
	return nil
}

// Reason returns the condition reason of an error from this package.
func Reason(err error) string {
	var le *session.LoginError
	var me *hypervisor.Error
	switch {
	case errors.As(err, &le):
		return le.Reason
	case errors.As(err, &me):
		return infrav1.PlacementNotFoundReason
	}
	return infrav1.LoginFailedReason
}
