package vcenter

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// FuzzObserve: whatever vCenter and the guest put into the properties of a VM (guest-written
// guestinfo values, guest-reported NICs and addresses, values of unexpected types), observe
// never panics, reads each value only from its own property, and takes addresses only from
// guest adapters whose MAC is one of the VM's NICs.
func FuzzObserve(f *testing.F) {
	f.Add("vm-42", "5032c8a1-0000-1111-2222-333344445555", "4232ABCD-0000-1111-2222-333344445555", "poweredOn",
		"guestToolsRunning", "00:50:56:AA:BB:CC", "00-50-56-aa-bb-cc", "10.0.0.21", "02:42:ac:11:00:02", "172.17.0.1",
		`{"step":"finish","state":"Succeeded"}`, uint8(0), uint8(0))
	f.Add("", "", "", "suspended", "guestToolsNotRunning", "00155D010203", "00155d010203", "fe80::1",
		"00155D010203", "2001:db8::21", "not json", uint8(1), uint8(1))
	f.Add("vm-1", "x", "\xff", "", "", "", "", "", "", "", "", uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, id, instanceUUID, biosUUID, power, tools, nicMAC, guestMAC, guestIP, otherMAC, otherIP, status string, valueKind, deviceKind uint8) {
		oc := types.ObjectContent{PropSet: []types.DynamicProperty{
			{Name: "config.instanceUuid", Val: instanceUUID},
			{Name: "config.uuid", Val: biosUUID},
			{Name: "runtime.powerState", Val: types.VirtualMachinePowerState(power)},
			{Name: "guest.toolsRunningStatus", Val: tools},
			{Name: "guest.net", Val: types.ArrayOfGuestNicInfo{GuestNicInfo: []types.GuestNicInfo{
				{MacAddress: guestMAC, IpAddress: []string{guestIP}},
				{MacAddress: otherMAC, IpAddress: []string{otherIP}}, // e.g. a container vEthernet
			}}},
			{Name: "config.hardware.device", Val: types.ArrayOfVirtualDevice{VirtualDevice: devices(deviceKind, nicMAC)}},
			{Name: extraConfigPath(keyStatus), Val: optionOfKind(valueKind, keyStatus, status)},
			{Name: extraConfigPath(keyUserDataEncoding), Val: optionOfKind(valueKind, keyUserDataEncoding, status)},
		}}
		vm, devs, _ := observe(types.ManagedObjectReference{Type: "VirtualMachine", Value: id}, oc)
		if vm.Ref.ID != id || vm.Ref.InstanceUUID != instanceUUID || vm.Ref.BIOSUUID != biosUUID ||
			vm.ProviderID != guest.ProviderID(biosUUID) || len(devs) != len(devices(deviceKind, nicMAC)) {
			t.Fatalf("identity read as %+v from %d devices", vm.Ref, len(devs))
		}
		if wantReport := status; valueKind%4 >= 2 && vm.Report != "" || valueKind%4 < 2 && vm.Report != wantReport {
			t.Fatalf("report %q read as %q (value kind %d)", status, vm.Report, valueKind%4)
		}
		if vm.UserDataPresent != (valueKind%4 < 2 && status != "") || vm.Delivered || vm.GuestRunStarted {
			t.Fatalf("flags read wrong: %+v", vm)
		}
		nics := map[string]bool{}
		for _, m := range vm.MACs {
			nics[m] = true
		}
		if len(vm.MACs) != ethernetCards(deviceKind) {
			t.Fatalf("MACs %v from device kind %d", vm.MACs, deviceKind%4)
		}
		for _, ip := range vm.IPs {
			fromNIC := ip == guestIP && nics[guest.NormalizeMAC(guestMAC)] || ip == otherIP && nics[guest.NormalizeMAC(otherMAC)]
			if !fromNIC {
				t.Fatalf("address %q does not come from a VM NIC (MACs %v)", ip, vm.MACs)
			}
		}
	})
}

// optionOfKind is a guestinfo property value as vCenter returns it (kinds 0, 1) or of a type
// observe must ignore (2, 3).
func optionOfKind(kind uint8, key, value string) any {
	switch kind % 4 {
	case 0:
		return types.OptionValue{Key: key, Value: value}
	case 1:
		return &types.OptionValue{Key: key, Value: value}
	case 2:
		return value
	}
	return types.OptionValue{Key: key, Value: len(value)}
}

// devices is a VM's device list: one NIC of some kind, two NICs, or a disk only.
func devices(kind uint8, mac string) []types.BaseVirtualDevice {
	vmxnet3 := &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
		VirtualDevice: types.VirtualDevice{Key: 4000}, MacAddress: mac}}}
	e1000e := &types.VirtualE1000e{VirtualEthernetCard: types.VirtualEthernetCard{
		VirtualDevice: types.VirtualDevice{Key: 4001}, MacAddress: "00:50:56:00:00:01"}}
	disk := &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2000}}
	switch kind % 4 {
	case 0:
		return []types.BaseVirtualDevice{disk, vmxnet3}
	case 1:
		return []types.BaseVirtualDevice{e1000e}
	case 2:
		return []types.BaseVirtualDevice{vmxnet3, disk, e1000e}
	}
	return []types.BaseVirtualDevice{disk}
}

func ethernetCards(kind uint8) int {
	return [4]int{1, 1, 2, 0}[kind%4]
}
