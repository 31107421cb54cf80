package vcenter

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// template is a resolved template with one 10 GiB disk and two NICs.
func template() *resolved {
	nic := func(key int32, mac string) types.BaseVirtualDevice {
		return &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
			VirtualDevice: types.VirtualDevice{Key: key}, MacAddress: mac, AddressType: "assigned"}}}
	}
	backing := &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: "VM Network"}}
	return &resolved{
		Pool: types.ManagedObjectReference{Type: "ResourcePool", Value: "resgroup-1"},
		Devices: object.VirtualDeviceList{
			&types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2000}, CapacityInKB: 10 * 1024 * 1024},
			nic(4000, "00:50:56:00:00:01"), nic(4001, "00:50:56:00:00:02"),
		},
		Backings: []types.BaseVirtualDeviceBackingInfo{backing, backing, backing},
		Snapshot: &types.ManagedObjectReference{Type: "VirtualMachineSnapshot", Value: "snapshot-1"},
	}
}

func spec(mutate func(*infrav1.VCenterMachineSpec)) *infrav1.VCenterMachineSpec {
	s := &infrav1.VCenterMachineSpec{Template: "t", CloneMode: infrav1.FullClone, NumCPUs: 4, MemoryMiB: 8192,
		Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func ops(changes []types.BaseVirtualDeviceConfigSpec) []string {
	var out []string
	for _, c := range changes {
		cs := c.GetVirtualDeviceConfigSpec()
		out = append(out, string(cs.Operation)+":"+object.VirtualDeviceList{cs.Device}.TypeName(cs.Device))
	}
	return out
}

func TestCloneSpec(t *testing.T) {
	g := NewWithT(t)
	place := template()
	cs, err := cloneSpec(cloneInput{Spec: spec(func(s *infrav1.VCenterMachineSpec) { s.DiskGiB = 40 }), UID: "uid-1",
		Owner: "ns/m/uid-1", Place: place, UserData: []byte("hello"), Metadata: []byte("instance-id: uid-1\n"),
		Network: []byte(`{"version":1}`)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs.PowerOn).To(BeFalse(), "the disk grows on the clone before its first boot")
	g.Expect(cs.Config.InstanceUuid).To(Equal("uid-1"))
	g.Expect(cs.Config.ExtraConfig).To(ContainElement(&types.OptionValue{Key: "capwin.owner", Value: "ns/m/uid-1"}), "the owner mark is not guestinfo")
	g.Expect(cs.Config.NumCPUs).To(BeEquivalentTo(4))
	g.Expect(cs.Config.MemoryMB).To(BeEquivalentTo(8192))
	g.Expect(ops(cs.Config.DeviceChange)).To(Equal([]string{"edit:VirtualVmxnet3", "remove:VirtualVmxnet3"}))
	grow, err := diskChange(spec(func(s *infrav1.VCenterMachineSpec) { s.DiskGiB = 40 }), place.Devices)
	g.Expect(err).NotTo(HaveOccurred())
	disk := grow.GetVirtualDeviceConfigSpec().Device.(*types.VirtualDisk)
	g.Expect(disk.CapacityInKB).To(BeEquivalentTo(40 * 1024 * 1024))
	g.Expect(place.Devices[0].(*types.VirtualDisk).CapacityInKB).To(BeEquivalentTo(10*1024*1024), "the cached template is not modified")
	same, err := cloneSpec(cloneInput{Spec: spec(nil), UID: "uid-1", Place: place, UserData: []byte("x"), Metadata: []byte("m")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same.PowerOn).To(BeTrue(), "complete metadata and no disk to grow: one task clones and powers on")
	tagged, err := cloneSpec(cloneInput{Spec: spec(func(s *infrav1.VCenterMachineSpec) {
		s.Tags = []infrav1.VCenterTag{{Category: "backup", Name: "daily"}}
	}),
		UID: "uid-1", Place: place, UserData: []byte("x"), Metadata: []byte("m")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tagged.PowerOn).To(BeFalse(), "tags are attached after the clone, before the first boot")
	nic := cs.Config.DeviceChange[0].GetVirtualDeviceConfigSpec().Device.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	g.Expect(nic.MacAddress).To(BeEmpty(), "a clone gets a new MAC")
	g.Expect(place.Devices[1].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress).To(Equal("00:50:56:00:00:01"))

	keys := map[string]string{}
	for _, o := range cs.Config.ExtraConfig {
		keys[o.GetOptionValue().Key] = o.GetOptionValue().Value.(string)
	}
	g.Expect(keys).To(HaveKeyWithValue("guestinfo.userdata.encoding", "gzip+base64"))
	g.Expect(keys).To(HaveKeyWithValue("guestinfo.metadata.encoding", "base64"))
	g.Expect(keys).To(HaveKeyWithValue("guestinfo.capwin.network", base64.StdEncoding.EncodeToString([]byte(`{"version":1}`))),
		"capwin's network document, base64 (no encoding key: the bootstrap's network step always decodes it)")
	raw, _ := base64.StdEncoding.DecodeString(keys["guestinfo.userdata"])
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	g.Expect(err).NotTo(HaveOccurred())
	plain, _ := io.ReadAll(zr)
	g.Expect(string(plain)).To(Equal("hello"))
}

func TestCloneSpecNICsAndModes(t *testing.T) {
	g := NewWithT(t)
	three := func(s *infrav1.VCenterMachineSpec) {
		s.Network = []infrav1.NetworkDevice{{NetworkName: "a", DHCP4: true}, {NetworkName: "b", MACAddr: "00:50:56:3f:00:09"}, {NetworkName: "c", DHCP4: true}}
	}
	cs, err := cloneSpec(cloneInput{Spec: spec(three), UID: "u", Place: template(), UserData: []byte("x")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs.PowerOn).To(BeFalse(), "metadata needs the MACs: delivered after the clone")
	g.Expect(ops(cs.Config.DeviceChange)).To(Equal([]string{"edit:VirtualVmxnet3", "edit:VirtualVmxnet3", "add:VirtualVmxnet3"}))
	manual := cs.Config.DeviceChange[1].GetVirtualDeviceConfigSpec().Device.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	g.Expect(manual.AddressType).To(Equal("manual"))
	g.Expect(manual.MacAddress).To(Equal("00:50:56:3f:00:09"))

	place := template()
	place.ProfileID = "profile-1"
	linked, err := cloneSpec(cloneInput{Spec: spec(func(s *infrav1.VCenterMachineSpec) { s.CloneMode = infrav1.LinkedClone }), UID: "u", Place: place})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(linked.Snapshot.Value).To(Equal("snapshot-1"))
	g.Expect(linked.Location.DiskMoveType).To(Equal("createNewChildDiskBacking"))
	g.Expect(linked.Location.Profile).To(HaveLen(1))
	g.Expect(linked.Location.Profile[0].(*types.VirtualMachineDefinedProfileSpec).ProfileId).To(Equal("profile-1"))
	g.Expect(linked.Config.VmProfile).To(Equal(linked.Location.Profile))
}

func TestCloneSpecRefuses(t *testing.T) {
	g := NewWithT(t)
	_, err := cloneSpec(cloneInput{Spec: spec(func(s *infrav1.VCenterMachineSpec) { s.DiskGiB = 5 }), UID: "u", Place: template()})
	var e *hypervisor.Error
	g.Expect(err).To(BeAssignableToTypeOf(e))
	g.Expect(errors.As(err, &e)).To(BeTrue())
	g.Expect(e.Reason).To(Equal(infrav1.InvalidSpecReason))
	g.Expect(err.Error()).To(ContainSubstring("spec.diskGiB: 5 GiB is smaller than the template's disk (10.0 GiB)"))

	big := make([]byte, 60*1024) // random bytes do not compress: 80 KiB once base64 encoded
	_, _ = rand.Read(big)
	_, err = guestinfo(nil, nil, big)
	g.Expect(err).To(HaveOccurred())
	g.Expect(errors.As(err, &e)).To(BeTrue())
	g.Expect(e.Reason).To(Equal(infrav1.BootstrapDataTooLargeReason))

	// Exactly at the limit is fine; one byte over is not.
	g.Expect(len(base64.StdEncoding.EncodeToString(make([]byte, 49152)))).To(Equal(maxGuestinfo))
	_, err = guestinfo(make([]byte, 49152), nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = guestinfo(make([]byte, 49153), nil, nil)
	g.Expect(err).To(HaveOccurred())
}
