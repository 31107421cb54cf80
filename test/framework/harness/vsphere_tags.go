package harness

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/vmware/govmomi/vapi/rest"
	_ "github.com/vmware/govmomi/vapi/simulator" // vcsim's vAPI endpoint: the tagging service
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/mo"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// VSphereTags are the vSphere tags (category, name) the harness creates in vcsim, for machine
// templates to attach (spec.tags).
var VSphereTags = []infrav1.VCenterTag{{Category: "backup", Name: "gold"}, {Category: "cost-center", Name: "4711"}}

// withTagging logs in to vcsim's vAPI endpoint with the session c and runs use with its tag manager.
func withTagging(ctx context.Context, c *vimClient, user *url.Userinfo, use func(*tags.Manager) error) error {
	rc := rest.NewClient(c.Client)
	if err := rc.Login(ctx, user); err != nil {
		return fmt.Errorf("vAPI login: %w", err)
	}
	defer func() { _ = rc.Logout(ctx) }()
	return use(tags.NewManager(rc))
}

// createTags creates VSphereTags, each category for many tags per VM.
func (v *VSphere) createTags(ctx context.Context, c *vimClient) error {
	return withTagging(ctx, c, v.Server.URL.User, func(m *tags.Manager) error {
		cats := map[string]string{}
		for _, t := range VSphereTags {
			if cats[t.Category] == "" {
				id, err := m.CreateCategory(ctx, &tags.Category{Name: t.Category, Cardinality: "MULTIPLE", AssociableTypes: []string{"VirtualMachine"}})
				if err != nil {
					return fmt.Errorf("tag category %s: %w", t.Category, err)
				}
				cats[t.Category] = id
			}
			if _, err := m.CreateTag(ctx, &tags.Tag{Name: t.Name, CategoryID: cats[t.Category]}); err != nil {
				return fmt.Errorf("tag %s/%s: %w", t.Category, t.Name, err)
			}
		}
		return nil
	})
}

// countTagged counts the attachments of VSphereTags: objects (VMs) that carry one of them, once
// per tag. capwin detaches a VM's tags before it destroys the VM, so with every Cluster deleted
// it is 0. vcsim lists a detached object among a tag's objects still (it marks the association
// false), so the objects' attached tags decide.
func countTagged(ctx context.Context, c *vimClient, user *url.Userinfo) (int, error) {
	n := 0
	err := withTagging(ctx, c, user, func(m *tags.Manager) error {
		ours := map[string]bool{}
		var objs []mo.Reference
		for _, t := range VSphereTags {
			tag, err := m.GetTagForCategory(ctx, t.Name, t.Category)
			if err != nil {
				return err
			}
			ours[tag.ID] = true
			seen, err := m.ListAttachedObjects(ctx, tag.ID)
			if err != nil {
				return err
			}
			for _, o := range seen {
				if !slices.ContainsFunc(objs, func(r mo.Reference) bool { return r.Reference() == o.Reference() }) {
					objs = append(objs, o)
				}
			}
		}
		if len(objs) == 0 {
			return nil
		}
		attached, err := m.GetAttachedTagsOnObjects(ctx, objs)
		if err != nil {
			return err
		}
		for _, a := range attached {
			for _, id := range a.TagIDs {
				if ours[id] {
					n++
				}
			}
		}
		return nil
	})
	return n, err
}
