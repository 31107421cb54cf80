package vcenter

import (
	"context"
	"errors"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// vcsimTags creates tag categories and tags in vcsim's vAPI simulator and returns the tags' ids
// by "category/name". A category is "name" (many tags per VM, for VMs) unless listed in single
// (one tag per object) or datastores (for datastores only).
func vcsimTags(t *testing.T, sess *session.Session, single, datastores []string, want ...infrav1.VCenterTag) map[string]string {
	t.Helper()
	ids := map[string]string{}
	err := sess.WithVAPI(context.Background(), "tagging", func(rc *rest.Client) error {
		m, cats := tags.NewManager(rc), map[string]string{}
		for _, w := range want {
			if cats[w.Category] == "" {
				c := tags.Category{Name: w.Category, Cardinality: "MULTIPLE", AssociableTypes: []string{"VirtualMachine"}}
				if slices.Contains(single, w.Category) {
					c.Cardinality = "SINGLE"
				}
				if slices.Contains(datastores, w.Category) {
					c.AssociableTypes = []string{"Datastore"}
				}
				id, err := m.CreateCategory(context.Background(), &c)
				if err != nil {
					return err
				}
				cats[w.Category] = id
			}
			id, err := m.CreateTag(context.Background(), &tags.Tag{Name: w.Name, CategoryID: cats[w.Category]})
			if err != nil {
				return err
			}
			ids[w.Category+"/"+w.Name] = id
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// attachedTags lists the ids of the tags attached to a VM, through the tagging API.
func attachedTags(g Gomega, sess *session.Session, id string) []string {
	var ids []string
	g.Expect(sess.WithVAPI(context.Background(), "tagging", func(rc *rest.Client) (err error) {
		ids, err = tags.NewManager(rc).ListAttachedTags(context.Background(), vmRef(id))
		return err
	})).To(Succeed())
	return ids
}

// TestTagsVcsim: a VM cloned with two tags stays powered off until Tag attached both (by id, as
// the tagging API lists them); a reconcile whose status reports them makes no call, one that
// lost its status attaches nothing new, and destroying the VM leaves it no tag.
func TestTagsVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	daily, gold := infrav1.VCenterTag{Category: "backup", Name: "daily"}, infrav1.VCenterTag{Category: "tier", Name: "gold"}
	ids := vcsimTags(t, sess, []string{"tier"}, nil, daily, infrav1.VCenterTag{Category: "backup", Name: "weekly"}, gold)
	spec := spec(func(s *infrav1.VCenterMachineSpec) { s.Tags = []infrav1.VCenterTag{daily, gold} })
	spec.Template = "DC0_H0_VM0"
	b, s, vm := cloneAndFind(t, sess, "win-tags", "6c1f0b6e-0000-4000-8000-0000000000e1", spec)
	g.Expect(vm.Power).To(Equal(hypervisor.PoweredOff), "the clone task leaves a tagged VM off")
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(BeEmpty())

	got, err := b.Tag(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	want := []infrav1.VCenterTagStatus{{Category: "backup", Name: "daily", ID: ids["backup/daily"]}, {Category: "tier", Name: "gold", ID: ids["tier/gold"]}}
	g.Expect(got).To(Equal(want))
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(ConsistOf(ids["backup/daily"], ids["tier/gold"]))

	// Status reports both: no call (a tag detached behind capwin's back stays detached).
	s.InfraMachine.GetMachineStatus().Tags = got
	g.Expect(sess.WithVAPI(ctx, "tagging", func(rc *rest.Client) error {
		return tags.NewManager(rc).DetachTag(ctx, ids["tier/gold"], vmRef(vm.Ref.ID))
	})).To(Succeed())
	again, err := b.Tag(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(want))
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(ConsistOf(ids["backup/daily"]))

	// Status lost: the tags are looked at again, the missing one attached, none twice.
	s.InfraMachine.GetMachineStatus().Tags = nil
	again, err = b.Tag(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(want))
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(ConsistOf(ids["backup/daily"], ids["tier/gold"]))

	s.InfraMachine.GetMachineStatus().Tags = nil // a lost status: untag lists what the VM carries
	ref, err := b.Destroy(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
	g.Expect(attachedTags(g, sess, vm.Ref.ID)).To(BeEmpty(), "a deleted VM keeps no tag")
}

// TestTagsVcsimInvalid: a tag vCenter lacks, or one that cannot go on the VM, is an InvalidSpec
// error naming it, and no tag of the spec is attached.
func TestTagsVcsimInvalid(t *testing.T) {
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	daily := infrav1.VCenterTag{Category: "backup", Name: "daily"}
	gold, silver := infrav1.VCenterTag{Category: "tier", Name: "gold"}, infrav1.VCenterTag{Category: "tier", Name: "silver"}
	lun := infrav1.VCenterTag{Category: "storage", Name: "fast"}
	vcsimTags(t, sess, []string{"tier"}, []string{"storage"}, daily, gold, silver, lun)
	vm, err := find.NewFinder(sess.Client).VirtualMachine(context.Background(), "DC0_H0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tags []infrav1.VCenterTag
		msg  string
	}{
		{"unknown category", []infrav1.VCenterTag{daily, {Category: "owner", Name: "team-a"}},
			`vCenter has no tag category "owner": create it (govc tags.category.create -t VirtualMachine "owner")`},
		{"unknown tag", []infrav1.VCenterTag{daily, {Category: "backup", Name: "hourly"}},
			`tag category "backup" has no tag "hourly": create it (govc tags.create -c "backup" "hourly")`},
		{"one tag per object", []infrav1.VCenterTag{daily, gold, silver},
			`tag category "tier" allows one tag per object, the VM would get 2 of its tags`},
		{"not for VMs", []infrav1.VCenterTag{daily, lun},
			`tags of category "storage" cannot be attached to virtual machines (associable types Datastore)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := spec(func(s *infrav1.VCenterMachineSpec) { s.Tags = tc.tags })
			b, s := vcsimMachine(t, sess, "win-bad-tags", "6c1f0b6e-0000-4000-8000-0000000000e2", spec)
			_, err := b.Tag(context.Background(), s, &hypervisor.VM{Ref: infrav1.VMReference{ID: vm.Reference().Value}})
			var e *hypervisor.Error
			g.Expect(errors.As(err, &e)).To(BeTrue(), "%v", err)
			g.Expect(e.Reason).To(Equal(infrav1.InvalidSpecReason))
			g.Expect(err.Error()).To(ContainSubstring(tc.msg))
			g.Expect(err.Error()).To(HavePrefix("attach spec.tags to VM win-bad-tags (" + vm.Reference().Value + ")"))
			g.Expect(attachedTags(g, sess, vm.Reference().Value)).To(BeEmpty(), "nothing attached")
		})
	}
}
