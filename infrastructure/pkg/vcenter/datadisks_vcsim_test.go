package vcenter

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
)

// vcsimDisk is a disk of a vcsim VM: unit, KiB, thin, eagerly scrubbed, file.
type vcsimDisk struct {
	Unit        int32
	KiB         int64
	Thin, Eager bool
	File        string
}

func vmDisks(g Gomega, sess *session.Session, id string) []vcsimDisk {
	var vm mo.VirtualMachine
	g.Expect(object.NewVirtualMachine(sess.Client, vmRef(id)).Properties(context.Background(), vmRef(id),
		[]string{"config.hardware.device"}, &vm)).To(Succeed())
	var out []vcsimDisk
	for _, d := range object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		b := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
		out = append(out, vcsimDisk{*disk.UnitNumber, disk.CapacityInKB, *b.ThinProvisioned, *b.EagerlyScrub, b.FileName})
	}
	return out
}

// fileExists reports whether a datastore file ("[LocalDS_0] vm/vm_1.vmdk") is there.
func fileExists(g Gomega, sess *session.Session, dc *object.Datacenter, file string) bool {
	var p object.DatastorePath
	g.Expect(p.FromString(file)).To(BeTrue(), file)
	ds, err := find.NewFinder(sess.Client).SetDatacenter(dc).Datastore(context.Background(), p.Datastore)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = ds.Stat(context.Background(), p.Path)
	if errors.As(err, new(object.DatastoreNoSuchFileError)) || errors.As(err, new(object.DatastoreNoSuchDirectoryError)) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return true
}

// TestDataDisksVcsim: the clone creates spec.dataDisks at the first free units of the template's
// SCSI controller with their sizes and backings, Find reports where the guest sees them, a second
// create adds none, and destroying the VM deletes their files.
func TestDataDisksVcsim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	spec := spec(twoDisks)
	spec.Template, spec.StoragePolicy = "DC0_H0_VM0", "vSAN Default Storage Policy"
	b, s, vm := cloneAndFind(t, sess, "win-data", "6c1f0b6e-0000-4000-8000-0000000000d1", spec)
	g.Expect(vm.DataDisks).To(Equal([]infrav1.DataDiskStatus{{Name: "data", Target: 1}, {Name: "logs", Target: 2}}))
	disks := vmDisks(g, sess, vm.Ref.ID)
	g.Expect(disks).To(HaveLen(3))
	g.Expect(disks[0].Unit).To(BeEquivalentTo(0), "the template's disk")
	g.Expect(disks[1:]).To(ConsistOf(
		HaveField("Unit", BeEquivalentTo(1)), HaveField("Unit", BeEquivalentTo(2))))
	for _, d := range disks[1:] {
		want := map[int32]vcsimDisk{1: {1, 20 * 1024 * 1024, true, false, d.File}, 2: {2, 5 * 1024 * 1024, false, true, d.File}}[d.Unit]
		g.Expect(d).To(Equal(want))
		g.Expect(d.File).To(HavePrefix("[LocalDS_0] win-data/"), "beside the VM's own files")
		g.Expect(fileExists(g, sess, b.dc, d.File)).To(BeTrue(), d.File)
	}

	// A create that runs again (its VM was not seen) clones nothing more: the name is taken.
	ref, err := b.Create(ctx, s, recorded{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, b, s, ref).State).To(Equal(hypervisor.TaskFailed))
	g.Expect(vmDisks(g, sess, vm.Ref.ID)).To(Equal(disks))
	again, err := b.Find(ctx, s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.DataDisks).To(Equal(vm.DataDisks))

	g.Expect(vm.Power).To(Equal(hypervisor.PoweredOn), "the clone task powered it on")
	ref, err = b.PowerOff(ctx, s, vm, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waitTask(t, b, s, ref).State).To(Equal(hypervisor.TaskSucceeded))
	ref, err = b.Destroy(ctx, s, vm)
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
	for _, d := range disks {
		g.Expect(fileExists(g, sess, b.dc, d.File)).To(BeFalse(), "%s outlived its VM", d.File)
	}
}

// TestDataDisksTemplateUnits: a template whose controller has unit 1 taken gives its clones' data
// disks the next free units; a template without a SCSI controller is an invalid spec.
func TestDataDisksTemplateUnits(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	dc, err := datacenter(ctx, sess, "DC0")
	g.Expect(err).NotTo(HaveOccurred())
	f := find.NewFinder(sess.Client).SetDatacenter(dc)
	tmpl, err := f.VirtualMachine(ctx, "DC0_H0_VM1")
	g.Expect(err).NotTo(HaveOccurred())
	devices, err := tmpl.Device(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	ctrl := firstSCSIController(devices)
	g.Expect(ctrl).NotTo(BeNil())
	second := devices.CreateDisk(ctrl, types.ManagedObjectReference{}, "")
	second.UnitNumber, second.CapacityInKB = types.NewInt32(1), 1024*1024
	g.Expect(tmpl.AddDevice(ctx, second)).To(Succeed())
	g.Expect(templates.MarkVM(ctx, tmpl)).To(Succeed())

	spec := spec(twoDisks)
	spec.Template = "DC0_H0_VM1"
	_, _, vm := cloneAndFind(t, sess, "win-units", "6c1f0b6e-0000-4000-8000-0000000000d2", spec)
	g.Expect(vm.DataDisks).To(Equal([]infrav1.DataDiskStatus{{Name: "data", Target: 2}, {Name: "logs", Target: 3}}))
	var units []int32
	for _, d := range vmDisks(g, sess, vm.Ref.ID) {
		units = append(units, d.Unit)
	}
	g.Expect(units).To(ConsistOf(BeEquivalentTo(0), BeEquivalentTo(1), BeEquivalentTo(2), BeEquivalentTo(3)))

	bare, err := f.VirtualMachine(ctx, "DC0_C0_RP0_VM0")
	g.Expect(err).NotTo(HaveOccurred())
	devices, err = bare.Device(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bare.RemoveDevice(ctx, true, devices.SelectByType((*types.VirtualDisk)(nil))...)).To(Succeed())
	g.Expect(bare.RemoveDevice(ctx, false, devices.SelectByType((*types.VirtualSCSIController)(nil))...)).To(Succeed())
	g.Expect(templates.MarkVM(ctx, bare)).To(Succeed())
	spec = spec.DeepCopy()
	spec.Template = "DC0_C0_RP0_VM0"
	b, s := vcsimMachine(t, sess, "win-bare", "6c1f0b6e-0000-4000-8000-0000000000d3", spec)
	b.where.Pool = "/DC0/host/DC0_C0/Resources"
	_, err = b.Create(ctx, s, recorded{})
	var e *hypervisor.Error
	g.Expect(errors.As(err, &e)).To(BeTrue(), "%v", err)
	g.Expect(e.Reason).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(e.Message).To(ContainSubstring("the template has no SCSI controller"))
}

// cloneAndFind clones one VCenterMachine of spec in vcsim, waits for the clone and returns what
// Find then reports.
func cloneAndFind(t *testing.T, sess *session.Session, name, uid string, spec *infrav1.VCenterMachineSpec) (*backend, *hypervisor.Scope, *hypervisor.VM) {
	t.Helper()
	g := NewWithT(t)
	b, s := vcsimMachine(t, sess, name, uid, spec)
	ref, err := b.Create(context.Background(), s, recorded{})
	g.Expect(err).NotTo(HaveOccurred())
	task := waitTask(t, b, s, ref)
	g.Expect(task.State).To(Equal(hypervisor.TaskSucceeded), task.Message)
	vm, err := b.Find(context.Background(), s)
	g.Expect(err).NotTo(HaveOccurred())
	return b, s, vm
}
