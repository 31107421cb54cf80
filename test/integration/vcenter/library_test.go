package vcenter_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/vcenter"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestContentLibraryTemplate: the template is a VM template item of a content library.
func TestContentLibraryTemplate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	c := vc(g)
	rc := rest.NewClient(c)
	g.Expect(rc.Login(ctx, vcsim.URL.User)).To(Succeed())
	f := find.NewFinder(c, false)
	dc, err := f.Datacenter(ctx, "DC0")
	g.Expect(err).NotTo(HaveOccurred())
	f.SetDatacenter(dc)
	ds, err := f.Datastore(ctx, "LocalDS_0")
	g.Expect(err).NotTo(HaveOccurred())
	src, err := f.VirtualMachine(ctx, templateVM)
	g.Expect(err).NotTo(HaveOccurred())
	pool, err := f.ResourcePool(ctx, "/DC0/host/DC0_H0/Resources")
	g.Expect(err).NotTo(HaveOccurred())
	folder, err := f.DefaultFolder(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	// vCenter's libraries and the VMs of their items outlive the test: this run's have names of
	// their own.
	lib, item := "capwin-templates-"+randSuffix(), "windows-2025-"+randSuffix()
	libID, err := library.NewManager(rc).CreateLibrary(ctx, library.Library{Name: lib, Type: "LOCAL",
		Storage: []library.StorageBacking{{DatastoreID: ds.Reference().Value, Type: "DATASTORE"}}})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = vcenter.NewManager(rc).CreateTemplate(ctx, vcenter.Template{Name: item, Library: libID, SourceVM: src.Reference().Value,
		Placement: &vcenter.Placement{Folder: folder.Reference().Value, ResourcePool: pool.Reference().Value}})
	g.Expect(err).NotTo(HaveOccurred())

	fx := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.ContentLibrary, spec.Template = lib, item
	fx.addMachine(t, "win-md-0-library-"+randSuffix(), userData, spec)
	m := fx.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))

	missing := newCluster(t, watchFilter)
	spec.Template = "windows-2031"
	missing.addMachine(t, "win-md-0-library-"+randSuffix(), userData, spec)
	m = missing.waitReason(t, infrav1.InvalidSpecReason)
	g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(ContainSubstring(`content library "` + lib + `" has no item "windows-2031"`))
}
