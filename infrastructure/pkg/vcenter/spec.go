package vcenter

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"reflect"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/guestos"
)

// cloneInput is everything the clone spec is built from; building it does no I/O.
type cloneInput struct {
	Spec *infrav1.VCenterMachineSpec
	UID  string
	// Owner is the object's keyOwner mark.
	Owner string
	// Group is the VM's anti-affinity rule (keyGroup; "" for none): such a VM is cloned powered
	// off, and put in the rule before PowerOn.
	Group string
	// Domain is the VM's failure domain VM group (keyDomain; "" for none). With HostGroup the
	// domain has a VM-Host rule: the VM is cloned powered off, and put in the group before PowerOn.
	Domain    string
	HostGroup bool
	// Tagged: the VM gets tags (spec.tags, its domain's zone and region), attached before its
	// first boot.
	Tagged   bool
	Note     string
	Place    *resolved
	UserData []byte
	// Metadata is nil when it needs the VM's MACs and is delivered after the clone.
	Metadata []byte
	// Network is capwin's network document (nil: none), delivered with the metadata.
	Network []byte
}

// cloneSpec is the desired VM: hardware, NICs, data disks, Secure Boot, vTPM, PCI devices (GPUs) and
// guestinfo in one CloneVM_Task, powered on by the same task when the metadata is complete and
// nothing is left to do before the first boot (a disk to grow, tags to attach, an anti-affinity
// rule). The data disks and PCI devices are created by the clone itself: a clone that fails or is
// cancelled leaves none behind.
func cloneSpec(in cloneInput) (types.VirtualMachineCloneSpec, error) {
	extra, err := guestinfo(in.Metadata, in.Network, in.UserData)
	if err != nil {
		return types.VirtualMachineCloneSpec{}, err
	}
	extra = append(extra, &types.OptionValue{Key: "disk.EnableUUID", Value: "TRUE"}, &types.OptionValue{Key: keyOwner, Value: in.Owner})
	devices, err := nicChanges(in.Spec, in.Place)
	if err != nil {
		return types.VirtualMachineCloneSpec{}, err
	}
	if in.Group != "" {
		extra = append(extra, &types.OptionValue{Key: keyGroup, Value: in.Group})
	}
	if in.Domain != "" {
		extra = append(extra, &types.OptionValue{Key: keyDomain, Value: in.Domain})
	}
	disks, placed, err := dataDiskChanges(in.Spec, in.Place.Devices, in.Place.ProfileID)
	if err != nil {
		return types.VirtualMachineCloneSpec{}, err
	}
	if disks != nil {
		devices = append(devices, disks...)
		extra = append(extra, &types.OptionValue{Key: keyDataDisks, Value: placed})
	}
	// A disk that must grow is grown on the clone, before its first boot (Deliver): its own
	// disk is edited then, not the template's. Growing it in the clone spec would save that task,
	// but an edited disk in CloneSpec.config is VMware's deprecated way: the device given keeps
	// the template's backing (file name), it fails for templates with snapshots ("Disks with
	// parents cannot be expanded"), and vcsim takes it literally: the clone then points at the
	// template's disk file, and destroying the clone deletes it (tried and measured: the machine
	// tests' later clones lost their system disk).
	grow, err := diskChange(in.Spec, in.Place.Devices)
	if err != nil {
		return types.VirtualMachineCloneSpec{}, err
	}
	cfg := &types.VirtualMachineConfigSpec{
		InstanceUuid: in.UID,
		Annotation:   in.Note,
		NumCPUs:      in.Spec.NumCPUs,
		MemoryMB:     in.Spec.MemoryMiB,
		ExtraConfig:  extra,
		DeviceChange: devices,
	}
	if err := securityConfig(cfg, in.Spec, in.Place); err != nil {
		return types.VirtualMachineCloneSpec{}, err
	}
	gpuConfig(cfg, in.Spec)
	loc := types.VirtualMachineRelocateSpec{Pool: &in.Place.Pool, Datastore: in.Place.Datastore}
	if in.Place.Folder != nil {
		ref := in.Place.Folder.Reference()
		loc.Folder = &ref
	}
	if id := in.Place.ProfileID; id != "" {
		profile := []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: id}}
		loc.Profile, cfg.VmProfile = profile, profile
	}
	// Tags are attached after the clone (a vAPI call) and an anti-affinity rule or a failure
	// domain's VM-Host rule is set before the first power-on: a VM with any boots after them (Tag,
	// PowerOn).
	tagged := in.Tagged || len(in.Spec.Tags) > 0
	powerOn := in.Metadata != nil && grow == nil && !tagged && in.Group == "" && !in.HostGroup
	spec := types.VirtualMachineCloneSpec{Location: loc, Config: cfg, PowerOn: powerOn}
	if in.Spec.CloneMode == infrav1.LinkedClone {
		spec.Snapshot = in.Place.Snapshot
		spec.Location.DiskMoveType = string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking)
	}
	return spec, nil
}

// guestinfo encodes the bootstrap data the way cloudbase-init and cloud-init read it, and capwin's
// network document (base64) the way the bootstrap's network step reads it, and refuses values
// over vSphere's 64 KiB limit rather than let a VM boot with truncated data.
func guestinfo(metadata, network, userData []byte) ([]types.BaseOptionValue, error) {
	var out []types.BaseOptionValue
	if userData != nil {
		v, err := gzipBase64(userData)
		if err != nil {
			return nil, fmt.Errorf("compress the bootstrap data: %w", err)
		}
		if len(v) > maxGuestinfo {
			return nil, hypervisor.Errorf(infrav1.BootstrapDataTooLargeReason,
				"bootstrap data is %d bytes gzip+base64 encoded; vSphere allows %d bytes in %s: shrink the WindowsConfig (files, commands)",
				len(v), maxGuestinfo, keyUserData)
		}
		out = append(out, &types.OptionValue{Key: keyUserData, Value: v}, &types.OptionValue{Key: keyUserDataEncoding, Value: "gzip+base64"})
	}
	// The metadata's encoding is named for cloudbase-init; capwin's own key is always base64.
	for _, d := range []struct {
		key, encodingKey, what string
		data                   []byte
	}{{keyMetadata, keyMetadataEncoding, "metadata", metadata}, {guestos.NetworkGuestinfoKey, "", "network document", network}} {
		if d.data == nil {
			continue
		}
		v := base64.StdEncoding.EncodeToString(d.data)
		if len(v) > maxGuestinfo {
			return nil, hypervisor.Errorf(infrav1.BootstrapDataTooLargeReason, "%s is %d bytes base64 encoded; vSphere allows %d", d.what, len(v), maxGuestinfo)
		}
		out = append(out, &types.OptionValue{Key: d.key, Value: v})
		if d.encodingKey != "" {
			out = append(out, &types.OptionValue{Key: d.encodingKey, Value: "base64"})
		}
	}
	return out, nil
}

func gzipBase64(b []byte) (string, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// nicChanges points the template's NICs at the spec's networks, adding or removing NICs to match
// the count.
func nicChanges(spec *infrav1.VCenterMachineSpec, place *resolved) ([]types.BaseVirtualDeviceConfigSpec, error) {
	var out []types.BaseVirtualDeviceConfigSpec
	nics := place.Devices.SelectByType((*types.VirtualEthernetCard)(nil))
	for i, dev := range spec.Network {
		if i >= len(place.Backings) {
			return nil, fmt.Errorf("network %d has no resolved backing", i)
		}
		op := types.VirtualDeviceConfigSpecOperationEdit
		var card types.BaseVirtualDevice
		if i < len(nics) {
			card = copyDevice(nics[i]) // the template's devices are cached and shared
		} else {
			op = types.VirtualDeviceConfigSpecOperationAdd
			c, err := object.EthernetCardTypes().CreateEthernetCard("vmxnet3", place.Backings[i])
			if err != nil {
				return nil, fmt.Errorf("add a vmxnet3 NIC for network %q: %w", dev.NetworkName, err)
			}
			card = c
		}
		eth := card.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		eth.Backing = place.Backings[i]
		eth.Connectable = &types.VirtualDeviceConnectInfo{StartConnected: true, AllowGuestControl: true, Connected: true}
		if dev.MACAddr != "" {
			eth.AddressType, eth.MacAddress = string(types.VirtualEthernetCardMacTypeManual), dev.MACAddr
		} else if op == types.VirtualDeviceConfigSpecOperationEdit {
			// A clone keeps no template MAC: let vCenter generate one.
			eth.AddressType, eth.MacAddress = string(types.VirtualEthernetCardMacTypeGenerated), ""
		}
		out = append(out, &types.VirtualDeviceConfigSpec{Operation: op, Device: card})
	}
	for _, extra := range nics[min(len(spec.Network), len(nics)):] {
		out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: extra})
	}
	return out, nil
}

// diskChange grows the first disk of devices to spec.diskGiB (nil: nothing to do); shrinking is
// refused (data would be lost).
func diskChange(spec *infrav1.VCenterMachineSpec, devices object.VirtualDeviceList) (types.BaseVirtualDeviceConfigSpec, error) {
	if spec.DiskGiB == 0 {
		return nil, nil
	}
	disks := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(disks) == 0 {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.diskGiB: the template has no disk")
	}
	disk := disks[0].(*types.VirtualDisk)
	want := int64(spec.DiskGiB) * 1024 * 1024
	have := disk.CapacityInKB
	if disk.CapacityInBytes > 0 {
		have = disk.CapacityInBytes / 1024
	}
	switch {
	case want < have:
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason,
			"spec.diskGiB: %d GiB is smaller than the template's disk (%.1f GiB); disks can only grow", spec.DiskGiB, float64(have)/(1024*1024))
	case want == have:
		return nil, nil
	}
	grown := *disk
	grown.CapacityInKB, grown.CapacityInBytes = want, want*1024
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &grown}, nil
}

// copyDevice returns a shallow copy of a device: enough to edit its top-level fields.
func copyDevice(d types.BaseVirtualDevice) types.BaseVirtualDevice {
	v := reflect.ValueOf(d)
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(types.BaseVirtualDevice)
}
