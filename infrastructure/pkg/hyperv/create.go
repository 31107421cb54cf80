package hyperv

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/guestos"
)

// Create places the VM on a host and creates it there, powered off, with its config drive, in one
// operation; the reference it returns names the VM (nothing to poll). A VM whose create was
// interrupted is finished on its host.
func (b *backend) Create(ctx context.Context, s *hypervisor.Scope, intent hypervisor.Intent) (string, error) {
	if err := b.lent(); err != nil {
		return "", err
	}
	ref, err := b.create(ctx, s, intent)
	switch KindOf(err) {
	case wire.KindInvalidSpec:
		return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "%s", err.Error())
	case wire.KindNoGPU:
		// Checked before New-VM: the host has nothing of this machine, the next Create places it again.
		return "", hypervisor.Errorf(infrav1.NoGPUAvailableReason, "%s", err.Error())
	}
	return ref, doing("create VM "+s.InfraMachine.GetName(), err)
}

func (b *backend) create(ctx context.Context, s *hypervisor.Scope, intent hypervisor.Intent) (string, error) {
	host, err := b.choose(ctx, s)
	if err != nil {
		return "", err
	}
	in, err := b.createInput(s, host)
	if err != nil {
		return "", err
	}
	c, err := b.conn(host)
	if err != nil {
		return "", err
	}
	if b.m.Spec.ParentDiskSource != nil && s.InfraMachine.GetMachineStatus().VM.Host != host {
		// The host is asked to copy before the create: it is recorded first, so the placement
		// counts it and the machine keeps it (and its copy) across a restart of the manager.
		if err := intent.Place(infrav1.VMReference{Host: host}); err != nil {
			b.p.Placements.Unchoose(s.InfraMachine.GetUID())
			return "", err
		}
	}
	if in.ParentDisk, err = b.parentDisk(ctx, c, host); err != nil {
		return "", err
	}
	if err := intent.Commit(infrav1.VMReference{Host: host}); err != nil {
		b.p.Placements.Unchoose(s.InfraMachine.GetUID())
		return "", err
	}
	var v wire.View
	if err := c.Run(ctx, wire.OpCreate, in, &v); err != nil {
		return "", err
	}
	return host + "/" + vmPrefix + v.ID, nil
}

// createInput renders the create operation on host: hardware, NICs with MACs (a NIC naming no
// switch connects to the host's: its failure domain's, else the cluster's), and the config drive.
func (b *backend) createInput(s *hypervisor.Scope, host string) (wire.CreateInput, error) {
	spec := &b.m.Spec
	uid := string(s.InfraMachine.GetUID())
	nics := append([]guest.NIC(nil), s.NICs...)
	in := wire.CreateInput{VMKey: wire.VMKey{Placement: b.folders, UID: uid}, Owner: ownerOf(s.InfraMachine),
		Name:      s.InfraMachine.GetName(),
		DiskBytes: int64(spec.DiskGiB) << 30, Processors: spec.Processors, MemoryBytes: spec.MemoryMiB << 20,
		NestedVirtualization: spec.NestedVirtualization, VTPM: spec.VTPM, GPU: gpuInput(spec.GPU)}
	if in.Processors == 0 {
		in.Processors = 2
	}
	if in.MemoryBytes == 0 {
		in.MemoryBytes = 4096 << 20
	}
	if dm := spec.DynamicMemory; dm != nil {
		in.DynamicMemory = &wire.DynamicMemory{MinimumBytes: dm.MinimumMiB << 20, MaximumBytes: dm.MaximumMiB << 20, BufferPercent: max(dm.BufferPercent, 5)}
	}
	in.Settings = vmSettings(spec)
	in.DataDisks, in.ConfigDriveLocation = dataDiskInputs(spec.DataDisks)
	in.AntiAffinityClass, in.EnforceAntiAffinity = b.antiAffinityClass(s)
	enabled, template := spec.SecureBootSettings()
	in.SecureBoot = wire.SecureBoot{Enabled: enabled, Template: string(template)}
	for i, d := range spec.Network {
		if nics[i].MAC == "" {
			nics[i].MAC = MAC(uid, i)
		}
		sw := d.NetworkName
		if sw == "" {
			sw = b.cluster.Spec.SwitchFor(host)
		}
		in.NICs = append(in.NICs, wire.NICInput{Switch: sw, MAC: strings.ToUpper(strings.NewReplacer(":", "", "-", "").Replace(nics[i].MAC)), VLANID: ptrValue(d.VLANID)})
	}
	files, err := configDriveFiles(s, uid, nics)
	if err != nil {
		return in, err
	}
	iso, err := wire.ConfigDrive(files)
	if err != nil {
		return in, err // names the config drive
	}
	in.ConfigDrive = base64.StdEncoding.EncodeToString(iso)
	return in, nil
}

// configDriveFiles are the NoCloud files of the config drive and, for a Windows guest whose NICs
// have routes, an MTU or search domains, capwin's network document for the bootstrap's network step.
func configDriveFiles(s *hypervisor.Scope, uid string, nics []guest.NIC) (map[string][]byte, error) {
	meta, network, err := guest.BuildNoCloud(uid, s.ComputerName, nics, s.Linux())
	if err != nil {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "metadata: %v", err)
	}
	files := map[string][]byte{"meta-data": meta}
	if network != nil {
		files["network-config"] = network
	}
	if s.UserData != nil {
		files["user-data"] = s.UserData
	}
	if s.Linux() {
		return files, nil
	}
	doc, err := guest.BuildNetworkDocument(nics)
	if err != nil {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "network document: %v", err)
	}
	if doc != nil {
		files[guestos.NetworkFile] = doc
	}
	return files, nil
}

// MAC is the static MAC of a machine's NIC when the spec names none: locally administered,
// derived from the machine's UID, so it is known before the VM exists (the network config
// matches adapters by MAC) and stable across retries.
func MAC(uid string, index int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", uid, index)))
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", sum[0], sum[1], sum[2], sum[3], sum[4])
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
