package vcenter

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// Tag attaches spec.tags and the failure domain's zone and region to the VM through vCenter's
// tagging service (a vAPI call, not part of the clone task), skipping those already attached,
// and returns them with their ids. Once status reports them all it makes no call: spec.tags and
// a domain's zone and region are immutable, and vCenter keeps a VM's tags.
func (b *backend) Tag(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) ([]infrav1.VCenterTagStatus, error) {
	have, want := s.InfraMachine.GetMachineStatus().Tags, b.tags()
	if reported(want, have) {
		return have, nil
	}
	var out []infrav1.VCenterTagStatus
	err := b.sess.WithVAPI(ctx, "tagging", func(rc *rest.Client) error {
		var err error
		out, err = attachTags(ctx, tags.NewManager(rc), want, b.tagField, vmRef(vm.Ref.ID))
		return err
	})
	action := "attach spec.tags to"
	if len(want) > len(b.spec.Tags) {
		action = fmt.Sprintf("attach spec.tags and the zone and region of failure domain %s to", b.fd.Name)
	}
	return out, callError(b.onVM(action, vm.Ref.ID), err)
}

// tagField names where a tag of the VM comes from, for an operator: spec.tags, or the failure
// domain's zone or region.
func (b *backend) tagField(t infrav1.VCenterTag) string {
	if slices.Contains(b.spec.Tags, t) || b.fd == nil {
		return "spec.tags"
	}
	return fmt.Sprintf("the zone or region of failure domain %s", b.fd.Name)
}

// reported is true when status lists every tag of the spec, and no other.
func reported(want []infrav1.VCenterTag, have []infrav1.VCenterTagStatus) bool {
	if len(want) != len(have) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h infrav1.VCenterTagStatus) bool {
			return h.Category == w.Category && h.Name == w.Name && h.ID != ""
		}) {
			return false
		}
	}
	return true
}

// attachTags resolves the tags to their ids and attaches those the VM lacks, in one call.
func attachTags(ctx context.Context, m *tags.Manager, want []infrav1.VCenterTag, field func(infrav1.VCenterTag) string, vm types.ManagedObjectReference) ([]infrav1.VCenterTagStatus, error) {
	if len(want) == 0 {
		return nil, nil
	}
	out, err := resolveTags(ctx, m, want, field)
	if err != nil {
		return nil, err
	}
	attached, err := m.ListAttachedTags(ctx, vm)
	if err != nil {
		return nil, fmt.Errorf("list the tags attached to %s: %w", vm.Value, err)
	}
	var missing []string
	for _, t := range out {
		if !slices.Contains(attached, t.ID) {
			missing = append(missing, t.ID)
		}
	}
	if len(missing) > 0 {
		if err := m.AttachMultipleTagsToObject(ctx, missing, vm); err != nil {
			return nil, fmt.Errorf("attach tags %s: %w%s", strings.Join(missing, ", "), err, forbidden(err))
		}
	}
	return out, nil
}

// forbidden says what a refused attach lacks (vCenter answers 403 without naming the privilege).
func forbidden(err error) string {
	if !rest.IsStatusError(err, http.StatusForbidden) {
		return ""
	}
	return " (the identity lacks InventoryService.Tagging.AttachTag on the tags or ObjectAttachable on the VM: see docs/vcenter/install.md, vCenter permissions)"
}

// resolveTags finds each tag's id by its category's name and its own name: one listing of the
// categories and one of each category named. A category or tag that does not exist, or that
// cannot go on a VM as the spec asks, is an InvalidSpec error naming it and where it comes from
// (field).
func resolveTags(ctx context.Context, m *tags.Manager, want []infrav1.VCenterTag, field func(infrav1.VCenterTag) string) ([]infrav1.VCenterTagStatus, error) {
	cats, err := m.GetCategories(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tag categories: %w", err)
	}
	inCategory := map[string][]tags.Tag{}
	var out []infrav1.VCenterTagStatus
	for _, w := range want {
		i := slices.IndexFunc(cats, func(c tags.Category) bool { return c.Name == w.Category })
		if i < 0 {
			return nil, hypervisor.Errorf(infrav1.InvalidSpecReason,
				"%s: vCenter has no tag category %q: create it (govc tags.category.create -t VirtualMachine %q) or remove the tag from the spec", field(w), w.Category, w.Category)
		}
		cat := cats[i]
		if err := attachable(cat, want, field(w)); err != nil {
			return nil, err
		}
		if _, ok := inCategory[cat.ID]; !ok {
			if inCategory[cat.ID], err = m.GetTagsForCategory(ctx, cat.ID); err != nil {
				return nil, fmt.Errorf("list the tags of category %q: %w", w.Category, err)
			}
		}
		j := slices.IndexFunc(inCategory[cat.ID], func(t tags.Tag) bool { return t.Name == w.Name })
		if j < 0 {
			return nil, hypervisor.Errorf(infrav1.InvalidSpecReason,
				"%s: tag category %q has no tag %q: create it (govc tags.create -c %q %q) or remove it from the spec", field(w), w.Category, w.Name, w.Category, w.Name)
		}
		out = append(out, infrav1.VCenterTagStatus{Category: w.Category, Name: w.Name, ID: inCategory[cat.ID][j].ID})
	}
	return out, nil
}

// attachable refuses a category whose tags cannot go on VMs, and a one-tag-per-object category
// of which the spec names more than one tag.
func attachable(cat tags.Category, want []infrav1.VCenterTag, field string) error {
	if len(cat.AssociableTypes) > 0 && !slices.ContainsFunc(cat.AssociableTypes, func(t string) bool { return strings.HasSuffix(t, "VirtualMachine") }) {
		return hypervisor.Errorf(infrav1.InvalidSpecReason,
			"%s: tags of category %q cannot be attached to virtual machines (associable types %s): add VirtualMachine to the category's types",
			field, cat.Name, strings.Join(cat.AssociableTypes, ", "))
	}
	n := 0
	for _, w := range want {
		if w.Category == cat.Name {
			n++
		}
	}
	if n > 1 && cat.Cardinality == "SINGLE" {
		return hypervisor.Errorf(infrav1.InvalidSpecReason,
			"%s: tag category %q allows one tag per object, the VM would get %d of its tags (spec.tags and its failure domain's zone and region)", field, cat.Name, n)
	}
	return nil
}

// untag detaches the tags of a tagged machine's VM (spec.tags) just before it is deleted, best
// effort and bounded: vCenter drops a deleted VM's tag associations itself, so a tagging service
// that does not answer must not hold up the delete; detaching first only keeps no association
// from depending on that (vcsim, for one, keeps them). It detaches whatever the VM carries, as
// listed then, so a status that lost its tags misses none.
func (b *backend) untag(ctx context.Context, vm *hypervisor.VM) {
	if len(b.tags()) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, untagTimeout)
	defer cancel()
	_ = b.sess.WithVAPI(ctx, "tagging", func(rc *rest.Client) error {
		m := tags.NewManager(rc)
		ids, err := m.ListAttachedTags(ctx, vmRef(vm.Ref.ID))
		if err != nil || len(ids) == 0 {
			return err
		}
		return m.DetachMultipleTagsFromObject(ctx, ids, vmRef(vm.Ref.ID))
	})
}

// untagTimeout bounds untag.
const untagTimeout = 10 * time.Second
