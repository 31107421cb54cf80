package vcenter

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// cloneSource finds the VM template to clone: an inventory path or name, or a VM template item of
// a content library. What it finds must be a template, and not a machine's VM: a name that
// resolves to another VM (a running one, with another tenant's disk and keys) is refused.
func cloneSource(ctx context.Context, sess *session.Session, f *find.Finder, w where) (*object.VirtualMachine, error) {
	tmpl, err := findTemplate(ctx, sess, f, w)
	if err != nil {
		return nil, err
	}
	if err := isTemplate(ctx, sess, tmpl, w.Template); err != nil {
		return nil, err
	}
	return tmpl, nil
}

// isTemplate refuses a clone source that is not marked as a template, or that carries capwin's
// owner mark (a machine's VM).
func isTemplate(ctx context.Context, sess *session.Session, tmpl *object.VirtualMachine, name string) error {
	var content []types.ObjectContent
	err := property.DefaultCollector(sess.Client).RetrieveOne(ctx, tmpl.Reference(), []string{"config.template", extraConfigPath(keyOwner)}, &content)
	if err != nil {
		return callError(subject{action: fmt.Sprintf("read template %q", name), template: name}, sess.Check(err))
	}
	isTemplate, mark := false, ""
	for _, oc := range content {
		for _, p := range oc.PropSet {
			switch p.Name {
			case "config.template":
				isTemplate, _ = p.Val.(bool)
			case extraConfigPath(keyOwner):
				mark = optionValue(p.Val)
			}
		}
	}
	switch {
	case mark != "":
		// Whose VM it is is not told: the message reaches the tenant that named it.
		return hypervisor.Errorf(infrav1.InvalidSpecReason, "template %q (%s) carries capwin's %s mark: it is a machine's VM, not a template", name, tmpl.Reference().Value, keyOwner)
	case !isTemplate:
		return hypervisor.Errorf(infrav1.InvalidSpecReason, "template %q (%s) is a VM, not a template: capwin clones templates only (mark it as a template in vCenter, or name a template or a content library item)", name, tmpl.Reference().Value)
	}
	return nil
}

// findTemplate resolves the clone source of w.
func findTemplate(ctx context.Context, sess *session.Session, f *find.Finder, w where) (*object.VirtualMachine, error) {
	if w.Library == "" {
		tmpl, err := f.VirtualMachine(ctx, w.Template)
		if err != nil {
			return nil, notFound("template", w.Template, sess.Check(err))
		}
		return tmpl, nil
	}
	ref, err := libraryTemplate(ctx, sess, w.Library, w.Template)
	if err != nil {
		return nil, err
	}
	if ref != nil {
		return object.NewVirtualMachine(sess.Client, *ref), nil
	}
	// The item's VM template lives in the inventory under the item's name.
	tmpl, err := f.VirtualMachine(ctx, w.Template)
	if err != nil {
		return nil, notFound("VM template of content library item", w.Template, sess.Check(err))
	}
	return tmpl, nil
}

// libraryTemplate resolves a content library VM template item through the vAPI endpoint. It
// returns nil when vCenter does not name the item's VM template (the caller then finds it by name).
func libraryTemplate(ctx context.Context, sess *session.Session, libraryName, itemName string) (ref *types.ManagedObjectReference, err error) {
	err = sess.WithVAPI(ctx, "content library", func(rc *rest.Client) error {
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
