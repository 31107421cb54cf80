package vcenter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// guestinfo keys (cloudbase-init's and cloud-init's VMware datasource; capwin's status key).
const (
	keyMetadata         = "guestinfo.metadata"
	keyMetadataEncoding = "guestinfo.metadata.encoding"
	keyUserData         = "guestinfo.userdata"
	keyUserDataEncoding = "guestinfo.userdata.encoding"
	keyStatus           = "guestinfo.capwin.bootstrap.status"
	// keyOwner marks a VM as created by capwin for one object ("namespace/name/uid"). It is not
	// a guestinfo key: the guest can neither read nor forge it.
	keyOwner = "capwin.owner"
	// maxGuestinfo is vSphere's limit for one guestinfo value.
	maxGuestinfo = 64 * 1024
)

func extraConfigPath(key string) string { return fmt.Sprintf("config.extraConfig[%q]", key) }

// vmProperties is everything one observation needs, read in one call. extraConfig is read by key:
// the whole map would carry the 64 KiB user data on every poll.
var vmProperties = []string{
	"config.instanceUuid", "config.uuid", "runtime.powerState", "guest.net", "guest.toolsRunningStatus",
	"config.hardware.device", "config.firmware", "config.bootOptions.efiSecureBootEnabled",
	extraConfigPath(keyMetadataEncoding), extraConfigPath(keyUserDataEncoding), extraConfigPath(keyStatus), extraConfigPath(keyGuestRun),
	extraConfigPath(keyOwner), extraConfigPath(keyDataDisks),
}

func vmRef(id string) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "VirtualMachine", Value: id}
}

// Find looks the VM up by the reference in status (one call), else by instance UUID (the
// object's UID), else, for a machine moved by clusterctl (new UID), by the BIOS UUID of its
// providerID. Whatever the path, a VM is returned only when it is this object's (owned).
func (b *backend) Find(ctx context.Context, s *hypervisor.Scope) (vm *hypervisor.VM, err error) {
	err = b.renewing(ctx, func() error {
		vm, err = b.find(ctx, s)
		return err
	})
	return vm, callError(b.on("find VM "+b.machine.Name), err)
}

func (b *backend) find(ctx context.Context, s *hypervisor.Scope) (*hypervisor.VM, error) {
	st := s.InfraMachine.GetMachineStatus()
	// A settled machine's VM (Scope.Settled) is past the changes the watch is for (tasks, boot,
	// addresses, the guest's bootstrap reports): keeping it out of the view keeps the view to the
	// machines in flight; a Windows guest's bootstrap, minutes long, is followed to its end.
	follow := !s.Settled()
	want := st.VM.InstanceUUID
	if want == "" {
		want = string(s.InfraMachine.GetUID())
	}
	if st.VM.ID != "" {
		vm, mark, err := b.read(ctx, vmRef(st.VM.ID), follow)
		if err != nil && !fault.Is(err, &types.ManagedObjectNotFound{}) {
			return nil, err
		}
		if vm != nil && strings.EqualFold(vm.Ref.InstanceUUID, want) {
			return owned(s, vm, mark, "status.vm.id")
		}
	}
	idx := object.NewSearchIndex(b.sess.Client)
	ref, err := idx.FindByUuid(ctx, b.dc, want, true, ptr.To(true))
	if err != nil {
		return nil, callError(b.on("look up the VM with instance UUID "+want), b.sess.Check(err))
	}
	via := "instance UUID " + want
	// A machine moved by clusterctl has a new UID and may have lost its status, but kept its
	// providerID: find its VM by BIOS UUID. With the instance UUID in status, that lookup was
	// authoritative already.
	if ref == nil && st.VM.InstanceUUID == "" {
		if bios := strings.TrimPrefix(*s.InfraMachine.GetProviderID(), "vsphere://"); bios != "" {
			if ref, err = idx.FindByUuid(ctx, b.dc, bios, true, ptr.To(false)); err != nil {
				return nil, callError(b.on("look up the VM with BIOS UUID "+bios), b.sess.Check(err))
			}
			via = "spec.providerID"
		}
	}
	if ref == nil {
		b.sess.Unfollow(b.machine)
		return nil, nil
	}
	vm, mark, err := b.read(ctx, ref.Reference(), follow)
	if err != nil || vm == nil {
		return nil, err
	}
	return owned(s, vm, mark, via)
}

// read observes one VM in one RetrieveProperties call; mark is its keyOwner value. The watch
// follows the VM from then on when follow is set (a settled machine's VM was let go by
// Settled, in the reconcile that found its Node linked and its user data cleared).
func (b *backend) read(ctx context.Context, ref types.ManagedObjectReference, follow bool) (*hypervisor.VM, string, error) {
	var content []types.ObjectContent
	if err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, ref, vmProperties, &content); err != nil {
		return nil, "", callError(b.on("read VM "+ref.Value), b.sess.Check(err))
	}
	if err := session.Unreadable(content); err != nil {
		return nil, "", callError(b.on("read VM "+ref.Value), err)
	}
	if len(content) == 0 {
		return nil, "", nil
	}
	vm, devices, mark := observe(ref, content[0])
	if follow {
		b.sess.FollowVM(b.machine, ref, content[0].PropSet)
	}
	b.devices = devices
	if grow, err := diskChange(b.spec, devices); err == nil && grow != nil {
		vm.Delivered = false // the disk is grown before the first boot, with the metadata
	}
	return vm, mark, nil
}

// observe turns the properties of one VM into the lifecycle's view of it. devices are the VM's
// devices but its data disks: the template's, as the clone edited them.
func observe(ref types.ManagedObjectReference, oc types.ObjectContent) (vm *hypervisor.VM, devices object.VirtualDeviceList, mark string) {
	vm = &hypervisor.VM{Ref: infrav1.VMReference{ID: ref.Value}}
	var nets []types.GuestNicInfo
	var placed string // keyDataDisks
	for _, p := range oc.PropSet {
		switch p.Name {
		case "config.instanceUuid":
			vm.Ref.InstanceUUID, _ = p.Val.(string)
		case "config.uuid":
			vm.Ref.BIOSUUID, _ = p.Val.(string)
		case "runtime.powerState":
			vm.Power = powerState(p.Val)
		case "guest.toolsRunningStatus":
			s, _ := p.Val.(string)
			vm.ToolsRunning = s == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
		case "guest.net":
			if v, ok := p.Val.(types.ArrayOfGuestNicInfo); ok {
				nets = v.GuestNicInfo
			}
		case "config.hardware.device":
			if v, ok := p.Val.(types.ArrayOfVirtualDevice); ok {
				devices = v.VirtualDevice
			}
		case extraConfigPath(keyMetadataEncoding):
			vm.Delivered = optionValue(p.Val) != ""
		case extraConfigPath(keyUserDataEncoding):
			vm.UserDataPresent = optionValue(p.Val) != ""
		case extraConfigPath(keyStatus):
			vm.Report = optionValue(p.Val)
		case extraConfigPath(keyGuestRun):
			vm.GuestRunStarted = optionValue(p.Val) != ""
		case extraConfigPath(keyOwner):
			mark = optionValue(p.Val)
		case extraConfigPath(keyDataDisks):
			placed = optionValue(p.Val)
		}
	}
	vm.ProviderID = guest.ProviderID(vm.Ref.BIOSUUID)
	vm.MACs, vm.IPs = nicAddresses(devices, nets)
	vm.Security = observeSecurity(oc, devices)
	var keys []int32
	vm.DataDisks, keys = observeDataDisks(placed, devices)
	devices = devices.Select(func(d types.BaseVirtualDevice) bool { return !slices.Contains(keys, d.GetVirtualDevice().Key) })
	return vm, devices, mark
}

// nicAddresses joins the VM's NICs with what the guest reports, by MAC: guest adapters that are
// not VM NICs (container vEthernet, CNI bridges) never contribute addresses.
func nicAddresses(devices object.VirtualDeviceList, nets []types.GuestNicInfo) (macs, ips []string) {
	for _, d := range devices.SelectByType((*types.VirtualEthernetCard)(nil)) {
		card := d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		mac := guest.NormalizeMAC(card.MacAddress)
		macs = append(macs, mac)
		for _, n := range nets {
			if guest.NormalizeMAC(n.MacAddress) == mac {
				ips = append(ips, n.IpAddress...)
			}
		}
	}
	return macs, ips
}

func optionValue(v any) string {
	switch o := v.(type) {
	case types.OptionValue:
		s, _ := o.Value.(string)
		return s
	case *types.OptionValue:
		if o == nil {
			return ""
		}
		s, _ := o.Value.(string)
		return s
	case types.BaseOptionValue:
		if ov := o.GetOptionValue(); ov != nil {
			s, _ := ov.Value.(string)
			return s
		}
	}
	return ""
}

func powerState(v any) hypervisor.PowerState {
	switch v {
	case types.VirtualMachinePowerStatePoweredOn:
		return hypervisor.PoweredOn
	case types.VirtualMachinePowerStateSuspended:
		return hypervisor.Suspended
	}
	return hypervisor.PoweredOff
}
