//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/guestjoin"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
)

// vcenter is the simulator's own session with vcsim (never the provider's).
type vcenter struct {
	u *url.URL
	c *govmomi.Client
}

// vm is what the simulator reads of one VM.
type vm struct {
	ref       types.ManagedObjectReference
	name      string
	poweredOn bool
	guestID   string
	extra     map[string]string
}

// client logs in once and again after an error dropped the session.
func (v *vcenter) client(ctx context.Context) (*govmomi.Client, error) {
	if v.c != nil {
		return v.c, nil
	}
	// The simulator's own session skips verification: it talks to the vcsim it was deployed
	// with; the provider under test pins the certificate's thumbprint.
	c, err := govmomi.NewClient(ctx, v.u, true)
	if err != nil {
		return nil, fmt.Errorf("log in to %s: %w", v.u.Host, err)
	}
	v.c = c
	return c, nil
}

// dropOnError forgets the session after a failed call, so the next one logs in again.
func (v *vcenter) dropOnError(err error) error {
	if err != nil {
		v.c = nil
	}
	return err
}

// vms reads every VM that is not a template, by instance UUID (capwin sets it to the UID of the
// VCenterMachine). One property retrieval per poll.
func (v *vcenter) vms(ctx context.Context) (map[string]vm, error) {
	c, err := v.client(ctx)
	if err != nil {
		return nil, err
	}
	cv, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, v.dropOnError(err)
	}
	defer func() { _ = cv.Destroy(ctx) }()
	var list []mo.VirtualMachine
	props := []string{"name", "runtime.powerState", "config.instanceUuid", "config.guestId", "config.template", "config.extraConfig"}
	if err := cv.Retrieve(ctx, []string{"VirtualMachine"}, props, &list); err != nil {
		return nil, v.dropOnError(err)
	}
	out := map[string]vm{}
	for _, m := range list {
		if m.Config == nil || m.Config.Template || m.Config.InstanceUuid == "" {
			continue
		}
		extra := map[string]string{}
		for _, o := range m.Config.ExtraConfig {
			if ov := o.GetOptionValue(); ov != nil {
				extra[ov.Key], _ = ov.Value.(string)
			}
		}
		out[m.Config.InstanceUuid] = vm{
			ref: m.Self, name: m.Name, guestID: m.Config.GuestId, extra: extra,
			poweredOn: m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn,
		}
	}
	return out, nil
}

// ensureTemplates clones the model's source VM into every missing template, sets its guest OS
// identifier (a clone keeps the source's) and marks it as a template, as an image build would
// leave it.
func (v *vcenter) ensureTemplates(ctx context.Context, o options) error {
	c, err := v.client(ctx)
	if err != nil {
		return err
	}
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, o.datacenter)
	if err != nil {
		return v.dropOnError(err)
	}
	f.SetDatacenter(dc)
	folder, err := f.DefaultFolder(ctx)
	if err != nil {
		return v.dropOnError(err)
	}
	pool, err := f.ResourcePool(ctx, o.resourcePool)
	if err != nil {
		return v.dropOnError(err)
	}
	src, err := f.VirtualMachine(ctx, o.sourceVM)
	if err != nil {
		return v.dropOnError(err)
	}
	for name, guestID := range o.templates {
		_, err := f.VirtualMachine(ctx, name)
		if err == nil {
			continue
		}
		var nf *find.NotFoundError
		if !errors.As(err, &nf) {
			return v.dropOnError(err)
		}
		poolRef := pool.Reference()
		task, err := src.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &poolRef}})
		if err != nil {
			return v.dropOnError(err)
		}
		info, err := task.WaitForResult(ctx)
		if err != nil {
			return v.dropOnError(fmt.Errorf("clone %s: %w", name, err))
		}
		t := object.NewVirtualMachine(c.Client, info.Result.(types.ManagedObjectReference))
		if err := v.reconfigure(ctx, t, types.VirtualMachineConfigSpec{GuestId: guestID}); err != nil {
			return err
		}
		if err := t.MarkAsTemplate(ctx); err != nil {
			return v.dropOnError(fmt.Errorf("mark %s as template: %w", name, err))
		}
	}
	return nil
}

// setExtraConfig writes VM config keys: SET.guest.ipAddress is what VMware Tools reports as the
// guest's address (vcsim applies it to guest.net), guestinfo.* is what `rpctool info-set` writes.
func (v *vcenter) setExtraConfig(ctx context.Context, ref types.ManagedObjectReference, kv map[string]string) error {
	c, err := v.client(ctx)
	if err != nil {
		return err
	}
	var opts []types.BaseOptionValue
	for k, val := range kv {
		opts = append(opts, &types.OptionValue{Key: k, Value: val})
	}
	return v.reconfigure(ctx, object.NewVirtualMachine(c.Client, ref), types.VirtualMachineConfigSpec{ExtraConfig: opts})
}

func (v *vcenter) reconfigure(ctx context.Context, m *object.VirtualMachine, spec types.VirtualMachineConfigSpec) error {
	task, err := m.Reconfigure(ctx, spec)
	if err != nil {
		return v.dropOnError(err)
	}
	return v.dropOnError(task.Wait(ctx))
}

// userData returns guestinfo.userdata without its transport encoding (nil if absent; gzip stays,
// cloudbase-init and cloud-init detect it themselves) and metadata's local-hostname.
func (m vm) userData() ([]byte, string, error) {
	if m.extra["guestinfo.userdata"] == "" {
		return nil, "", nil
	}
	data, meta, err := guestjoin.GuestinfoData(m.extra)
	if err != nil {
		return nil, "", err
	}
	var md guestmeta.Metadata
	if err := yaml.Unmarshal(meta, &md); err != nil {
		return nil, "", fmt.Errorf("guestinfo.metadata: %w", err)
	}
	if md.LocalHostname == "" {
		return nil, "", errors.New("guestinfo.metadata has no local-hostname")
	}
	return data, md.LocalHostname, nil
}

// vcenterChannel is VMware Tools: the address through guest info (vcsim's SET.guest.ipAddress),
// the bootstrap status through `rpctool info-set guestinfo.<key>`.
type vcenterChannel struct {
	vc  *vcenter
	ref types.ManagedObjectReference
}

func (c *vcenterChannel) address(ctx context.Context, ip string) error {
	return c.vc.setExtraConfig(ctx, c.ref, map[string]string{"SET.guest.ipAddress": ip,
		"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
}

func (c *vcenterChannel) report(ctx context.Context, st userdata.Status, r simguest.Report) error {
	data, _ := json.Marshal(r)
	return c.vc.setExtraConfig(ctx, c.ref, map[string]string{st.GuestinfoKey: string(data)})
}
