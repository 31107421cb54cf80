// Package templates turns VMs of a vcsim inventory into VM templates, as the templates capwin
// clones are in vCenter (capwin refuses to clone a VM that is not one).
package templates

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// Mark powers off each VM at paths (inventory paths or names) on the vcsim at u (with its login)
// and marks it as a template.
func Mark(ctx context.Context, u *url.URL, paths ...string) error {
	c, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		return fmt.Errorf("log in to vcsim: %w", err)
	}
	defer func() { _ = c.Logout(ctx) }()
	f := find.NewFinder(c.Client)
	for _, p := range paths {
		vm, err := f.VirtualMachine(ctx, p)
		if err != nil {
			return fmt.Errorf("find %s: %w", p, err)
		}
		if err := MarkVM(ctx, vm); err != nil {
			return err
		}
	}
	return nil
}

// MarkVM powers a VM off and marks it as a template.
func MarkVM(ctx context.Context, vm *object.VirtualMachine) error {
	state, err := vm.PowerState(ctx)
	if err != nil {
		return fmt.Errorf("read the power state of %s: %w", vm.Reference().Value, err)
	}
	if state == types.VirtualMachinePowerStatePoweredOn {
		task, err := vm.PowerOff(ctx)
		if err == nil {
			err = task.Wait(ctx)
		}
		if err != nil {
			return fmt.Errorf("power off %s: %w", vm.Reference().Value, err)
		}
	}
	if err := vm.MarkAsTemplate(ctx); err != nil {
		return fmt.Errorf("mark %s as a template: %w", vm.Reference().Value, err)
	}
	return nil
}
