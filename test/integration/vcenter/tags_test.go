package vcenter_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/types"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestTags: a machine's spec.tags are attached to its VM before it is powered on and reported in
// status.tags with their ids; a tag vCenter lacks keeps the VM off with an InvalidSpec condition
// naming it; a running VM goes on with a warning when a tag went missing; a deleted machine's VM
// keeps no tag.
func TestTags(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	c := vc(g)
	rc := rest.NewClient(c)
	g.Expect(rc.Login(ctx, vcsim.URL.User)).To(Succeed())
	tm := tags.NewManager(rc)
	category := "capwin-test-backup-" + randSuffix() // vCenter's categories outlive the test
	catID, err := tm.CreateCategory(ctx, &tags.Category{Name: category, Cardinality: "MULTIPLE", AssociableTypes: []string{"VirtualMachine"}})
	g.Expect(err).NotTo(HaveOccurred())
	ids := map[string]string{}
	for _, name := range []string{"daily", "offsite"} {
		ids[name], err = tm.CreateTag(ctx, &tags.Tag{Name: name, CategoryID: catID})
		g.Expect(err).NotTo(HaveOccurred())
	}

	f := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.Tags = []infrav1.VCenterTag{{Category: category, Name: "daily"}, {Category: category, Name: "offsite"}}
	f.addMachine(t, "win-md-0-tags-"+randSuffix(), userData, spec)
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.Tags).To(Equal([]infrav1.VCenterTagStatus{
		{Category: category, Name: "daily", ID: ids["daily"]}, {Category: category, Name: "offsite", ID: ids["offsite"]},
	}))
	vms := vmsWithUUID(g, c, string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	g.Expect(vms[0].Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOn))
	attached, err := tm.ListAttachedTags(ctx, vms[0].Self)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(attached).To(ConsistOf(ids["daily"], ids["offsite"]))

	// A running VM whose status lost its tags while one was deleted in vCenter goes on: a warning
	// event, no InvalidSpec.
	g.Expect(tm.DeleteTag(ctx, &tags.Tag{ID: ids["offsite"]})).To(Succeed())
	g.Eventually(func(g Gomega) {
		m := f.get(g)
		m.Status.Tags = nil
		g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		var events eventsv1.EventList
		g.Expect(k8s.List(ctx, &events, client.InNamespace(m.Namespace))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(HaveField("Regarding.Name", m.Name), HaveField("Reason", infrav1.InvalidSpecReason),
			HaveField("Note", ContainSubstring(`has no tag "offsite"`)))))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		m := f.get(g)
		g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Reason).To(Equal(infrav1.WaitingForAddressesReason))
		g.Expect(m.Status.Tags).To(BeEmpty())
	}, time.Second, 100*time.Millisecond).Should(Succeed())

	missing := newCluster(t, watchFilter)
	spec = *spec.DeepCopy()
	spec.Tags = []infrav1.VCenterTag{spec.Tags[0], {Category: category, Name: "hourly"}}
	missing.addMachine(t, "win-md-0-tags-"+randSuffix(), userData, spec)
	bad := missing.waitReason(t, infrav1.InvalidSpecReason)
	g.Expect(condition(bad.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(ContainSubstring(
		`spec.tags: tag category "` + category + `" has no tag "hourly"`))
	badVMs := vmsWithUUID(g, c, string(bad.UID))
	g.Expect(badVMs).To(HaveLen(1))
	g.Expect(badVMs[0].Runtime.PowerState).To(Equal(types.VirtualMachinePowerStatePoweredOff), "a VM without its tags does not boot")
	attached, err = tm.ListAttachedTags(ctx, badVMs[0].Self)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(attached).To(BeEmpty())

	g.Expect(k8s.Delete(ctx, f.vm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(f.vm), &infrav1.VCenterMachine{}))
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	attached, err = tm.ListAttachedTags(ctx, vms[0].Self)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(attached).To(BeEmpty(), "the deleted VM keeps no tag")
}
