package vcenter

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TemplateHardware reads the CPU count and memory of a VM template, for machine templates that
// keep the template's sizes.
func (p *Provider) TemplateHardware(ctx context.Context, vc *infrav1.VCenterCluster, spec *infrav1.VCenterMachineSpec) (cpus int32, memoryMiB int64, err error) {
	cpus, memoryMiB, err = p.templateHardware(ctx, vc, spec)
	if err != nil {
		return 0, 0, callError(subject{action: fmt.Sprintf("read the CPU count and memory of template %q", spec.Template), template: spec.Template}, err)
	}
	return cpus, memoryMiB, nil
}

func (p *Provider) templateHardware(ctx context.Context, vc *infrav1.VCenterCluster, spec *infrav1.VCenterMachineSpec) (cpus int32, memoryMiB int64, err error) {
	sess, lent, err := p.sessionLent(ctx, vc)
	if err != nil {
		return 0, 0, err
	}
	dcName := spec.Placement.Datacenter
	if dcName == "" {
		dcName = vc.Spec.Datacenter
	}
	dc, err := datacenter(ctx, sess, dcName)
	if err != nil {
		return 0, 0, err
	}
	tmpl, err := cloneSource(ctx, sess, find.NewFinder(sess.Client, false).SetDatacenter(dc), where{Template: spec.Template, Library: spec.ContentLibrary})
	if err != nil {
		return 0, 0, err
	}
	if err := lent.checkTemplate(tmpl.InventoryPath, spec.ContentLibrary); err != nil {
		return 0, 0, err
	}
	var props mo.VirtualMachine
	if err := tmpl.Properties(ctx, tmpl.Reference(), []string{"config.hardware.numCPU", "config.hardware.memoryMB"}, &props); err != nil {
		return 0, 0, sess.Check(err)
	}
	if props.Config == nil {
		return 0, 0, nil
	}
	return props.Config.Hardware.NumCPU, int64(props.Config.Hardware.MemoryMB), nil
}
