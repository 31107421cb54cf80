package vcenter

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// backend is one reconcile's view of vCenter for one VCenterMachine.
type backend struct {
	sess  *session.Session
	dc    *object.Datacenter
	where where
	spec  *infrav1.VCenterMachineSpec
	// devices of the VM as Find last read them, without its data disks (diskChange grows the
	// template's first disk).
	devices object.VirtualDeviceList
	// relogin returns a new session once vCenter ended this one.
	relogin func(ctx context.Context) (*session.Session, error)
	// machine is the VCenterMachine: the session's watch wakes it when its VM or tasks change.
	machine k8stypes.NamespacedName
	// fd is the machine's failure domain (nil: none), as the VCenterCluster defines it.
	fd *infrav1.VCenterFailureDomain
	// lent is what the cluster's identity lends (nil: the cluster's own Secret).
	lent *lent
}

// tags are the tags of the machine's VM: spec.tags and its failure domain's zone and region.
func (b *backend) tags() []infrav1.VCenterTag {
	var domain []infrav1.VCenterTag
	if b.fd != nil && b.fd.Zone != nil && b.fd.Region != nil {
		domain = []infrav1.VCenterTag{*b.fd.Zone, *b.fd.Region}
	}
	return vmTags(b.spec, domain)
}

// onClone is the subject of the clone that creates this machine's VM.
func (b *backend) onClone() subject {
	return b.on(fmt.Sprintf("clone VM %s from template %s", b.machine.Name, b.where.Template))
}

// onVM is the subject of an action on this machine's VM: "power on VM win-md-0-x (vm-42)".
func (b *backend) onVM(action, id string) subject {
	if id == "" {
		return b.on(fmt.Sprintf("%s VM %s", action, b.machine.Name))
	}
	return b.on(fmt.Sprintf("%s VM %s (%s)", action, b.machine.Name, id))
}

// on is the subject of an action of this backend: its VM, folder, template and placement.
func (b *backend) on(action string) subject {
	folder := b.where.Folder
	if r := placements(b.sess).cached(b.where); r != nil && r.Folder != nil && r.Folder.InventoryPath != "" {
		folder = r.Folder.InventoryPath
	}
	return subject{action: action, vm: b.machine.Name, folder: folder, template: b.where.Template,
		datastore: b.where.Datastore, pool: b.where.Pool, vtpm: b.spec.VTPM, pci: len(b.spec.PCIDevices) > 0}
}

// metadata renders the instance metadata and, for a Windows guest whose NICs have routes, an MTU
// or search domains, capwin's network document (see guestos.NetworkGuestinfoKey); both nil when a
// NIC needs its MAC and the VM is not known.
func metadata(s *hypervisor.Scope, macs []string) (md, network []byte, err error) {
	nics := guest.WithMACs(s.NICs, macs)
	for _, n := range nics {
		if n.MAC == "" && n.NeedsMAC() {
			return nil, nil, nil
		}
	}
	var withMAC []guest.NIC
	for _, n := range nics {
		if n.MAC != "" {
			withMAC = append(withMAC, n)
		}
	}
	if md, err = guest.BuildMetadata(string(s.InfraMachine.GetUID()), s.ComputerName, withMAC, s.Linux()); err != nil || s.Linux() {
		return md, nil, err
	}
	network, err = guest.BuildNetworkDocument(withMAC)
	return md, network, err
}

// Create clones the template with hardware, NICs, disk and guestinfo in one task.
func (b *backend) Create(ctx context.Context, s *hypervisor.Scope, intent hypervisor.Intent) (string, error) {
	ref, err := b.clone(ctx, s, intent)
	return ref, callError(b.onClone(), err)
}

func (b *backend) clone(ctx context.Context, s *hypervisor.Scope, intent hypervisor.Intent) (string, error) {
	place, err := resolve(ctx, b.sess, b.where)
	if err != nil {
		return "", err
	}
	if err := b.lent.check(place.Paths); err != nil {
		return "", err
	}
	if b.fd != nil && len(b.fd.Networks) > len(b.spec.Network) {
		return "", hypervisor.Errorf(infrav1.InvalidSpecReason,
			"failure domain %q names %d networks, the machine has %d NICs (spec.network): a domain's networks replace the machine's by position",
			b.fd.Name, len(b.fd.Networks), len(b.spec.Network))
	}
	md, network, err := metadata(s, nil)
	if err != nil {
		return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "metadata: %v", err)
	}
	obj := s.InfraMachine
	spec, err := cloneSpec(cloneInput{
		Spec: b.spec, UID: string(obj.GetUID()), Owner: ownerMark(obj), Group: groupRule(s, b.spec), Place: place, UserData: s.UserData, Metadata: md, Network: network,
		Domain: domainGroup(s, b.fd), HostGroup: b.fd != nil && b.fd.HostGroup != nil, Tagged: len(b.tags()) > 0,
		Note: fmt.Sprintf("capwin: %s/%s (cluster %s)", obj.GetNamespace(), obj.GetName(), s.Cluster.Name),
	})
	if err != nil {
		return "", err
	}
	if s.CreateMayRun {
		if err := b.noCloneRunning(ctx, s, place.Template); err != nil {
			return "", err
		}
	}
	tmpl := object.NewVirtualMachine(b.sess.Client, place.Template)
	var cloneErr error
	ref, err := b.sess.StartTask(ctx, b.machine, func() error { return intent.Commit(infrav1.VMReference{}) }, func() (*object.Task, error) {
		task, err := tmpl.Clone(ctx, place.Folder, obj.GetName(), spec)
		cloneErr = err
		return task, err
	})
	if cloneErr != nil {
		forget(b.sess)
		if maybeSent(cloneErr) {
			return "", &hypervisor.CreatePending{Err: fmt.Errorf("no answer from vCenter: %w", cloneErr)}
		}
		return "", b.sess.Check(cloneErr)
	}
	return ref, err
}

// Deliver prepares the clone for its first boot in one reconfigure: metadata that needed the VM's
// MACs, and the disk grown to spec.diskGiB.
func (b *backend) Deliver(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	on := b.onVM("write the bootstrap metadata into", vm.Ref.ID)
	md, network, err := metadata(s, vm.MACs)
	if err != nil || md == nil {
		return "", callError(on, hypervisor.Errorf(infrav1.InvalidSpecReason, "metadata: the VM has fewer NICs than spec.network (%v)", err))
	}
	extra, err := guestinfo(md, network, nil)
	if err != nil {
		return "", callError(on, err)
	}
	spec := types.VirtualMachineConfigSpec{ExtraConfig: extra}
	grow, err := diskChange(b.spec, b.devices)
	if err != nil {
		return "", callError(on, err)
	}
	if grow != nil {
		spec.DeviceChange = []types.BaseVirtualDeviceConfigSpec{grow}
	}
	return b.task(ctx, on, func() (*object.Task, error) { return b.object(vm).Reconfigure(ctx, spec) })
}

// ClearUserData removes the user data (bootstrap token, CA hash) from the VM config.
func (b *backend) ClearUserData(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	return b.reconfigure(ctx, b.onVM("remove the bootstrap data from", vm.Ref.ID), vm, []types.BaseOptionValue{
		&types.OptionValue{Key: keyUserData, Value: ""}, &types.OptionValue{Key: keyUserDataEncoding, Value: ""},
	})
}

func (b *backend) reconfigure(ctx context.Context, on subject, vm *hypervisor.VM, extra []types.BaseOptionValue) (string, error) {
	return b.task(ctx, on, func() (*object.Task, error) {
		return b.object(vm).Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: extra})
	})
}

// PowerOn starts the VM, in its group's anti-affinity rule and its failure domain's VM group
// first (DRS places it by the rules).
func (b *backend) PowerOn(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	if err := b.syncRule(ctx, s, vmRef(vm.Ref.ID), false); err != nil {
		return "", err
	}
	if err := b.syncDomain(ctx, s, vmRef(vm.Ref.ID), false); err != nil {
		return "", err
	}
	return b.task(ctx, b.onVM("power on", vm.Ref.ID), func() (*object.Task, error) { return b.object(vm).PowerOn(ctx) })
}

// PowerOff cuts the power (hard) or asks VMware Tools to shut the guest down.
func (b *backend) PowerOff(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM, hard bool) (string, error) {
	v := b.object(vm)
	if !hard {
		return "", callError(b.onVM("shut down the guest of", vm.Ref.ID), b.sess.Check(v.ShutdownGuest(ctx)))
	}
	return b.task(ctx, b.onVM("power off", vm.Ref.ID), func() (*object.Task, error) { return v.PowerOff(ctx) })
}

// Destroy takes the VM out of its group's anti-affinity rule and its failure domain's VM group
// (the last one out removes them), detaches its tags (untag), then deletes the VM and its disks.
func (b *backend) Destroy(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	if err := b.syncRule(ctx, s, vmRef(vm.Ref.ID), true); err != nil {
		return "", err
	}
	if err := b.syncDomain(ctx, s, vmRef(vm.Ref.ID), true); err != nil {
		return "", err
	}
	b.untag(ctx, vm)
	return b.task(ctx, b.onVM("delete", vm.Ref.ID), func() (*object.Task, error) { return b.object(vm).Destroy(ctx) })
}

// task starts a task in a slot of the server (Session.StartTask) and returns its reference, or
// the call's error in words.
func (b *backend) task(ctx context.Context, on subject, start func() (*object.Task, error)) (string, error) {
	ref, err := b.sess.StartTask(ctx, b.machine, nil, start)
	return ref, callError(on, b.sess.Check(err))
}

// Capabilities: the vCenter session's property collector reports VM and task changes, and
// vCenter's tagging service tags VMs.
func (b *backend) Capabilities() hypervisor.Capabilities {
	return hypervisor.Capabilities{Watch: b, Tags: b}
}

// Watched reports whether the session's watch follows this machine's VM and tasks, so the
// lifecycle can poll them slowly.
func (b *backend) Watched() bool { return b.sess.Watched() }

// Settled stops following the VM of a machine that is done (see settled).
func (b *backend) Settled(*hypervisor.Scope) { b.sess.Unfollow(b.machine) }

// renewing makes a read, and makes it once more on a new session when vCenter ended this one
// (NotAuthenticated: a vCenter restart, an idle timeout, an administrator): the poll goes on
// instead of failing the reconcile. The new login passes the login gate like any other.
func (b *backend) renewing(ctx context.Context, read func() error) error {
	err := read()
	if !fault.Is(err, &types.NotAuthenticated{}) {
		return err
	}
	_ = b.sess.Check(err)
	sess, err := b.relogin(ctx)
	if err != nil {
		return err
	}
	b.sess, b.dc = sess, object.NewDatacenter(sess.Client, b.dc.Reference())
	return read()
}

// object is the govmomi handle of an observed VM.
func (b *backend) object(vm *hypervisor.VM) *object.VirtualMachine {
	return object.NewVirtualMachine(b.sess.Client, vmRef(vm.Ref.ID))
}
