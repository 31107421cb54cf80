package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/test/framework/vcsim"
)

// Images are the VM templates (vSphere) and golden disks (Hyper-V) the harness offers, with the
// Windows build their guests run (0 = Linux). The guest learns its build from the image only,
// as a real Windows guest does.
var Images = map[string]Image{
	"ltsc2022": {VSphereTemplate: "windows-2022", GuestID: string(types.VirtualMachineGuestOsIdentifierWindows2019srvNext_64Guest),
		HyperVDisk: `C:\ClusterStorage\golden\windows-2022.vhdx`, Build: osversion.LTSC2022},
	"ltsc2025": {VSphereTemplate: "windows-2025", GuestID: string(types.VirtualMachineGuestOsIdentifierWindows2022srvNext_64Guest),
		HyperVDisk: `C:\ClusterStorage\golden\windows-2025.vhdx`, Build: osversion.LTSC2025},
}

// Image is one OS image of the harness.
type Image struct {
	VSphereTemplate, GuestID, HyperVDisk string
	Build                                uint16
}

// buildOfGuestID maps a VM's guest OS identifier (copied from its template by a clone) to the
// Windows build its guest runs.
func buildOfGuestID(id string) (uint16, bool) {
	for _, img := range Images {
		if img.GuestID == id {
			return img.Build, true
		}
	}
	return 0, false
}

// VSphere is vcsim (govmomi's vCenter simulator, VPX model) over TLS with the harness's
// Windows templates and in-memory guest operations.
type VSphere struct {
	Model    *simulator.Model
	Server   *simulator.Server
	GuestOps *vcsim.GuestOps
	endpoint *vcsim.Endpoint
	// ResourcePool and Network are where the harness's machine templates place VMs.
	ResourcePool, Network, Datacenter string
}

// startVSphere starts vcsim and creates one template per image (a full clone of the model's
// first VM with the image's guest OS identifier, marked as a template).
func startVSphere(ctx context.Context) (*VSphere, error) {
	model := simulator.VPX()
	model.Machine = 1
	if err := model.Create(); err != nil {
		return nil, err
	}
	model.Service.TLS = new(tls.Config)    // capwin verifies vCenter's certificate
	model.Service.RegisterEndpoints = true // vAPI (tags), SPBM
	model.Service.Listen = &url.URL{User: url.UserPassword("capwin@vsphere.local", randomPassword("Vc-"))}
	v := &VSphere{Model: model, GuestOps: vcsim.Install(model), Datacenter: "DC0",
		ResourcePool: "/DC0/host/DC0_C0/Resources", Network: "VM Network"}
	v.Server = model.Service.NewServer()
	v.endpoint = vcsim.NewEndpoint(model, v.Server)
	vcsim.TrustHosts(model, soap.ThumbprintSHA256(v.Server.Certificate()))
	c, err := newVimClient(ctx, v.Server.URL)
	if err != nil {
		v.stop()
		return nil, err
	}
	defer func() { _ = c.logout(ctx) }()
	if err := v.createTemplates(ctx, c); err != nil {
		v.stop()
		return nil, fmt.Errorf("vcsim templates: %w", err)
	}
	if err := v.createTags(ctx, c); err != nil {
		v.stop()
		return nil, fmt.Errorf("vcsim tags: %w", err)
	}
	if err := v.createHostGroup(ctx, c); err != nil {
		v.stop()
		return nil, fmt.Errorf("vcsim host group: %w", err)
	}
	return v, nil
}

func (v *VSphere) createTemplates(ctx context.Context, c *vimClient) error {
	finder, err := c.finder(ctx, v.Datacenter)
	if err != nil {
		return err
	}
	src, err := finder.VirtualMachine(ctx, "DC0_C0_RP0_VM0")
	if err != nil {
		return err
	}
	folder, err := finder.DefaultFolder(ctx)
	if err != nil {
		return err
	}
	pool, err := finder.ResourcePool(ctx, v.ResourcePool)
	if err != nil {
		return err
	}
	for _, img := range Images {
		poolRef := pool.Reference()
		task, err := src.Clone(ctx, folder, img.VSphereTemplate, types.VirtualMachineCloneSpec{
			Location: types.VirtualMachineRelocateSpec{Pool: &poolRef},
		})
		if err != nil {
			return err
		}
		info, err := task.WaitForResult(ctx)
		if err != nil {
			return err
		}
		vm := object.NewVirtualMachine(c.Client, info.Result.(types.ManagedObjectReference))
		// vcsim's clone keeps the source's guest OS identifier; the template states its own.
		if err := reconfigure(ctx, vm, types.VirtualMachineConfigSpec{GuestId: img.GuestID}); err != nil {
			return err
		}
		if err := vm.MarkAsTemplate(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Thumbprint is vcsim's certificate thumbprint (VCenterCluster.spec.thumbprint).
func (v *VSphere) Thumbprint() string { return soap.ThumbprintSHA256(v.Server.Certificate()) }

// Restart restarts vCenter's service (vcsim.Endpoint.Restart): away for down, then back on the
// same address with the same inventory, every session and ended task forgotten.
func (v *VSphere) Restart(ctx context.Context, down time.Duration) error {
	return v.endpoint.Restart(ctx, down)
}

func (v *VSphere) stop() {
	if v.endpoint != nil {
		v.endpoint.Close()
	}
	v.Model.Remove()
}

func reconfigure(ctx context.Context, vm *object.VirtualMachine, spec types.VirtualMachineConfigSpec) error {
	task, err := vm.Reconfigure(ctx, spec)
	if err != nil {
		return err
	}
	return task.Wait(ctx)
}
