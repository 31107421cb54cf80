package vcenter

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// template finds the VM template to clone: an inventory path or name, or a VM template item of
// a content library.
func (sess *Session) template(ctx context.Context, f *find.Finder, w where) (*object.VirtualMachine, error) {
	if w.Library == "" {
		tmpl, err := f.VirtualMachine(ctx, w.Template)
		if err != nil {
			return nil, notFound("template", w.Template, sess.check(err))
		}
		return tmpl, nil
	}
	ref, err := sess.libraryTemplate(ctx, w.Library, w.Template)
	if err != nil {
		return nil, err
	}
	if ref != nil {
		return object.NewVirtualMachine(sess.Client, *ref), nil
	}
	// The item's VM template lives in the inventory under the item's name.
	tmpl, err := f.VirtualMachine(ctx, w.Template)
	if err != nil {
		return nil, notFound("VM template of content library item", w.Template, sess.check(err))
	}
	return tmpl, nil
}

// libraryTemplate resolves a content library VM template item through the vAPI endpoint. It
// returns nil when vCenter does not name the item's VM template (the caller then finds it by name).
func (sess *Session) libraryTemplate(ctx context.Context, libraryName, itemName string) (ref *types.ManagedObjectReference, err error) {
	err = sess.withVAPI(ctx, "content library", func(rc *rest.Client) error {
		ref, err = libraryItemTemplate(ctx, rc, libraryName, itemName)
		return err
	})
	return ref, err
}

// libraryItemTemplate is libraryTemplate on a logged-in vAPI client.
func libraryItemTemplate(ctx context.Context, rc *rest.Client, libraryName, itemName string) (*types.ManagedObjectReference, error) {
	lm := library.NewManager(rc)
	lib, err := lm.GetLibraryByName(ctx, libraryName)
	if err != nil {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.contentLibrary: library %q not found: %v", libraryName, err)
	}
	ids, err := lm.FindLibraryItems(ctx, library.FindItem{LibraryID: lib.ID, Name: itemName})
	if err != nil {
		return nil, fmt.Errorf("find item %q in library %q: %w", itemName, libraryName, err)
	}
	if len(ids) == 0 {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.template: content library %q has no item %q", libraryName, itemName)
	}
	item, err := lm.GetLibraryItem(ctx, ids[0])
	if err != nil {
		return nil, fmt.Errorf("read item %q: %w", itemName, err)
	}
	if item.Type != "vm-template" {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason,
			"spec.template: item %q of library %q is of type %q; only VM template items can be cloned (convert an OVF item to a VM template item)",
			itemName, libraryName, item.Type)
	}
	info, err := vcenter.NewManager(rc).GetLibraryTemplateInfo(ctx, item.ID)
	if err != nil {
		return nil, fmt.Errorf("read VM template item %q: %w", itemName, err)
	}
	if info.VmTemplate == "" {
		return nil, nil
	}
	return &types.ManagedObjectReference{Type: "VirtualMachine", Value: info.VmTemplate}, nil
}
