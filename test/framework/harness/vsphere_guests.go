package harness

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/internal/guestos"
	"github.com/capwin/capwin/test/framework/guestjoin"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// vimClient is a logged-in vSphere API session of the harness (never the provider's).
type vimClient struct{ *vim25.Client }

func newVimClient(ctx context.Context, u *url.URL) (*vimClient, error) {
	c, err := vim25.NewClient(ctx, soap.NewClient(u, true))
	if err != nil {
		return nil, err
	}
	if err := session.NewManager(c).Login(ctx, u.User); err != nil {
		return nil, err
	}
	withRelogin(c, u.User)
	return &vimClient{c}, nil
}

func (c *vimClient) logout(ctx context.Context) error {
	return session.NewManager(c.Client).Logout(ctx)
}

func (c *vimClient) finder(ctx context.Context, datacenter string) (*find.Finder, error) {
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, datacenter)
	if err != nil {
		return nil, err
	}
	return f.SetDatacenter(dc), nil
}

const vsphereKey = "vsphere/"

// watchVSphere boots a guest for every powered-on VM that carries capwin user data in its
// guestinfo (as cloudbase-init's VMware datasource reads it) and stops guests of VMs that are
// powered off or gone. It uses its own vSphere session.
func (h *Harness) watchVSphere(ctx context.Context, c *vimClient) {
	ignored := map[string]bool{} // powered-on VMs without user data (the model's own VMs)
	poll(ctx, h.opts.GuestPoll, func(ctx context.Context) {
		var vms []mo.VirtualMachine
		v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
		if err == nil {
			err = v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "runtime.powerState", "config.instanceUuid", "config.guestId"}, &vms)
			_ = v.Destroy(ctx)
		}
		if err != nil {
			if ctx.Err() == nil {
				h.log.Error(err, "vSphere guest watcher")
			}
			return
		}
		alive := map[string]bool{}
		for _, vm := range vms {
			if vm.Config == nil || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
				continue
			}
			key := vsphereKey + vm.Config.InstanceUuid
			alive[key] = true
			if ignored[key] || h.Guests.known(key) {
				continue
			}
			cfg, err := guestinfoUserData(ctx, c, vm.Self)
			if err != nil {
				h.log.Error(err, "read guestinfo", "vm", vm.Name)
				continue
			}
			if cfg.UserData == nil {
				ignored[key] = true
				continue
			}
			cfg.Build, _ = buildOfGuestID(vm.Config.GuestId)
			cfg.Address, cfg.Channel = h.Guests.address("10.1"), &vsphereChannel{c: c, vm: object.NewVirtualMachine(c.Client, vm.Self)}
			h.Guests.alias(vm.Self.Value, key)
			h.Guests.boot(key, vm.Name, cfg)
		}
		h.Guests.stopMissing(vsphereKey, alive)
	})
}

// guestinfoUserData returns what the guest reads from guestinfo: the user data without its
// transport encoding (nil if absent) and the host name of guestinfo.metadata, as cloudbase-init's
// VMware datasource reads them, capwin's network document as the network step reads it, and the
// MACs of the VM's adapters.
func guestinfoUserData(ctx context.Context, c *vimClient, ref types.ManagedObjectReference) (guest.Config, error) {
	var vm mo.VirtualMachine
	if err := object.NewVirtualMachine(c.Client, ref).Properties(ctx, ref, []string{"config.extraConfig", "config.hardware.device"}, &vm); err != nil {
		return guest.Config{}, err
	}
	if vm.Config == nil { // a session vCenter just ended reads as no properties
		return guest.Config{}, fmt.Errorf("VM %s: no config read", ref.Value)
	}
	ec := map[string]string{}
	for _, o := range vm.Config.ExtraConfig {
		if v := o.GetOptionValue(); v != nil {
			ec[v.Key], _ = v.Value.(string)
		}
	}
	if ec["guestinfo.userdata"] == "" {
		return guest.Config{}, nil
	}
	data, meta, err := guestjoin.GuestinfoData(ec)
	if err != nil {
		return guest.Config{}, err
	}
	cfg := guest.Config{UserData: data, MACs: []string{}}
	if cfg.Hostname, err = localHostname(meta); err != nil {
		return cfg, err
	}
	if v, ok := ec[guestos.NetworkGuestinfoKey]; ok {
		if cfg.Network, err = base64.StdEncoding.DecodeString(v); err != nil {
			return cfg, fmt.Errorf("%s: %w", guestos.NetworkGuestinfoKey, err)
		}
	}
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	for _, d := range devices.SelectByType((*types.VirtualEthernetCard)(nil)) {
		cfg.MACs = append(cfg.MACs, d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress)
	}
	cfg.Disks = vsphereDataDisks(devices)
	return cfg, nil
}

// localHostname reads local-hostname from instance metadata (YAML or JSON).
func localHostname(meta []byte) (string, error) {
	var md guestmeta.Metadata
	if err := yaml.Unmarshal(meta, &md); err != nil {
		return "", fmt.Errorf("metadata: %w", err)
	}
	return md.LocalHostname, nil
}

// vsphereChannel is VMware Tools: the address through guest info, the bootstrap status
// through `rpctool info-set guestinfo.<key>`.
type vsphereChannel struct {
	c  *vimClient
	vm *object.VirtualMachine
}

// Address reports the address, and VMware Tools running: they start together at boot.
func (ch *vsphereChannel) Address(ctx context.Context, ip string) error {
	if err := ch.set(ctx, "SET.guest.toolsRunningStatus", string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)); err != nil {
		return err
	}
	return ch.set(ctx, "SET.guest.ipAddress", ip)
}

func (ch *vsphereChannel) Status(ctx context.Context, s userdata.Status, report []byte) error {
	return ch.set(ctx, s.GuestinfoKey, string(report))
}

// set writes a guestinfo key; like VMware Tools it tries again while vCenter does not answer
// (its service restarting), for up to a minute.
func (ch *vsphereChannel) set(ctx context.Context, key, value string) error {
	spec := types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: key, Value: value}}}
	var err error
	for range 120 {
		if err = reconfigure(ctx, ch.vm, spec); err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return err
}

// countVMs counts capwin's VMs in vcsim.
func (v *VSphere) countVMs(ctx context.Context) (int, error) {
	names, err := v.VMNames(ctx)
	return len(names), err
}

// VMNames are the names of capwin's VMs in vcsim (those of their VCenterMachines): every VM but
// the templates and the model's own (named DC0_…).
func (v *VSphere) VMNames(ctx context.Context) ([]string, error) {
	c, err := newVimClient(ctx, v.Server.URL)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.logout(ctx) }()
	var vms []mo.VirtualMachine
	cv, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cv.Destroy(ctx) }()
	if err := cv.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.template"}, &vms); err != nil {
		return nil, err
	}
	var names []string
	for _, vm := range vms {
		if (vm.Config == nil || !vm.Config.Template) && !strings.HasPrefix(vm.Name, "DC0_") {
			names = append(names, vm.Name)
		}
	}
	return names, nil
}

// vsphereDataDisks are the VM's disks but the system disk (unit 0; not necessarily the first in
// device order: vCenter lists an edited disk, such as a grown one, after the others) as a Windows
// guest sees them: PVSCSI and LSI Logic SAS report the disk at unit number N as SCSI target N,
// LUN 0. New disks are RAW.
func vsphereDataDisks(devices object.VirtualDeviceList) []guest.Disk {
	var out []guest.Disk
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		if unit := d.GetVirtualDevice().UnitNumber; unit != nil && *unit != 0 {
			out = append(out, guest.Disk{Target: *unit, LUN: 0})
		}
	}
	return out
}
