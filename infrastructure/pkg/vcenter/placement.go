package vcenter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/pbm"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// placementTTL bounds how long looked-up references are trusted; inventory moves are picked up
// after it, and any ManagedObjectNotFound drops the entry at once.
const placementTTL = 10 * time.Minute

// where is what a clone needs, as names from the spec.
type where struct {
	Datacenter, Template, Library, Snapshot, Folder, Pool, Datastore, StoragePolicy string
	Networks                                                                        string // '\x00'-joined
}

// resolved are the managed object references of a where, and what the template looks like.
type resolved struct {
	Datacenter *object.Datacenter
	Template   types.ManagedObjectReference
	Snapshot   *types.ManagedObjectReference
	Folder     *object.Folder
	Pool       types.ManagedObjectReference
	Datastore  *types.ManagedObjectReference
	// Devices of the template (disks and NICs are edited in the clone spec).
	Devices object.VirtualDeviceList
	// Firmware of the template: efi, bios, or "" (vSphere's default, BIOS).
	Firmware string
	// Backings of the spec's networks, in spec order.
	Backings []types.BaseVirtualDeviceBackingInfo
	// ProfileID of the storage policy ("" for none).
	ProfileID string
	// Paths are the inventory paths of what the clone uses, for the identity's allow-lists.
	Paths   lend.VCenterPaths
	expires time.Time
}

// placementCache is what was looked up through one session: placements and datacenters.
type placementCache struct {
	mu sync.Mutex
	m  map[where]*resolved
	dc map[string]*object.Datacenter
}

// placementKey keeps a session's placementCache (session.Session.Value).
type placementKey struct{}

// placements is the session's placementCache.
func placements(sess *session.Session) *placementCache {
	return sess.Value(placementKey{}, func() any {
		return &placementCache{m: map[where]*resolved{}, dc: map[string]*object.Datacenter{}}
	}).(*placementCache)
}

// datacenter resolves (and caches) a datacenter by name or path.
func datacenter(ctx context.Context, sess *session.Session, name string) (*object.Datacenter, error) {
	c := placements(sess)
	c.mu.Lock()
	dc := c.dc[name]
	c.mu.Unlock()
	if dc != nil {
		return dc, nil
	}
	dc, err := find.NewFinder(sess.Client, false).Datacenter(ctx, name)
	if err != nil {
		return nil, notFound("datacenter", name, sess.Check(err))
	}
	c.mu.Lock()
	c.dc[name] = dc
	c.mu.Unlock()
	return dc, nil
}

// cached returns the references of a placement looked up before (nil: none), expired or not.
func (c *placementCache) cached(w where) *resolved {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[w]
}

// forget drops cached references after vCenter said one of them no longer exists.
func forget(sess *session.Session) {
	c := placements(sess)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.dc = map[where]*resolved{}, map[string]*object.Datacenter{}
}

// resolve looks a placement up once per TTL; all machines of one template share the result.
func resolve(ctx context.Context, sess *session.Session, w where) (*resolved, error) {
	c := placements(sess)
	c.mu.Lock()
	r := c.m[w]
	c.mu.Unlock()
	if r != nil && time.Now().Before(r.expires) {
		return r, nil
	}
	r, err := lookup(ctx, sess, w)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.m[w] = r
	c.mu.Unlock()
	return r, nil
}

func lookup(ctx context.Context, sess *session.Session, w where) (*resolved, error) {
	dc, err := datacenter(ctx, sess, w.Datacenter)
	if err != nil {
		return nil, err
	}
	f := find.NewFinder(sess.Client, false).SetDatacenter(dc)
	r := &resolved{Datacenter: dc, expires: time.Now().Add(placementTTL)}
	tmpl, err := cloneSource(ctx, sess, f, w)
	if err != nil {
		return nil, err
	}
	r.Template = tmpl.Reference()
	r.Paths = lend.VCenterPaths{Template: tmpl.InventoryPath, Library: w.Library, StoragePolicy: w.StoragePolicy}
	var props mo.VirtualMachine
	if err := tmpl.Properties(ctx, r.Template, []string{"config.hardware.device", "config.firmware", "snapshot"}, &props); err != nil {
		return nil, callError(subject{action: fmt.Sprintf("read the devices of template %q", w.Template), template: w.Template}, sess.Check(err))
	}
	if props.Config == nil {
		return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "template %q has no configuration (is it accessible?)", w.Template)
	}
	r.Devices, r.Firmware = object.VirtualDeviceList(props.Config.Hardware.Device), props.Config.Firmware
	if w.Snapshot != "" {
		snap := findSnapshot(props.Snapshot, w.Snapshot)
		if snap == nil {
			return nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.snapshot: template %q has no snapshot %q (linkedClone needs one)", w.Template, w.Snapshot)
		}
		r.Snapshot = snap
	}
	if w.Folder == "" {
		r.Folder, err = f.DefaultFolder(ctx)
	} else {
		r.Folder, err = f.Folder(ctx, w.Folder)
	}
	if err != nil {
		return nil, notFound("folder", w.Folder, sess.Check(err))
	}
	r.Paths.Folder = r.Folder.InventoryPath
	var pool *object.ResourcePool
	if w.Pool == "" {
		pool, err = f.DefaultResourcePool(ctx)
	} else {
		pool, err = f.ResourcePool(ctx, w.Pool)
	}
	if err != nil {
		return nil, notFound("resourcePool", w.Pool, sess.Check(err))
	}
	r.Pool, r.Paths.Pool = pool.Reference(), pool.InventoryPath
	if w.Datastore != "" {
		ds, err := f.Datastore(ctx, w.Datastore)
		if err != nil {
			return nil, notFound("datastore", w.Datastore, sess.Check(err))
		}
		ref := ds.Reference()
		r.Datastore, r.Paths.Datastore = &ref, ds.InventoryPath
	}
	if w.StoragePolicy != "" {
		if r.ProfileID, err = profileID(ctx, sess, w.StoragePolicy); err != nil {
			return nil, err
		}
	}
	for _, name := range strings.Split(w.Networks, "\x00") {
		net, err := f.Network(ctx, name)
		if err != nil {
			return nil, notFound("network", name, sess.Check(err))
		}
		backing, err := net.EthernetCardBackingInfo(ctx)
		if err != nil {
			return nil, callError(subject{action: fmt.Sprintf("read the NIC backing of network %q", name)}, sess.Check(err))
		}
		r.Backings = append(r.Backings, backing)
		r.Paths.Networks = append(r.Paths.Networks, net.GetInventoryPath())
	}
	return r, nil
}

// findSnapshot walks the snapshot tree for a name (or the current snapshot for "").
func findSnapshot(info *types.VirtualMachineSnapshotInfo, name string) *types.ManagedObjectReference {
	if info == nil {
		return nil
	}
	var walk func([]types.VirtualMachineSnapshotTree) *types.ManagedObjectReference
	walk = func(trees []types.VirtualMachineSnapshotTree) *types.ManagedObjectReference {
		for i := range trees {
			if trees[i].Name == name {
				return &trees[i].Snapshot
			}
			if ref := walk(trees[i].ChildSnapshotList); ref != nil {
				return ref
			}
		}
		return nil
	}
	return walk(info.RootSnapshotList)
}

// notFound turns a finder miss into an InvalidSpec error naming the object; other errors pass.
func notFound(what, name string, err error) error {
	var nf *find.NotFoundError
	var dnf *find.DefaultNotFoundError
	var mf *find.MultipleFoundError
	var dmf *find.DefaultMultipleFoundError
	switch {
	case errors.As(err, &dmf):
		return hypervisor.Errorf(infrav1.InvalidSpecReason, "%s: vCenter has several, so the spec must name one", what)
	case errors.As(err, &nf), errors.As(err, &dnf):
		return hypervisor.Errorf(infrav1.InvalidSpecReason, "%s %q not found in vCenter", what, name)
	case errors.As(err, &mf):
		return hypervisor.Errorf(infrav1.InvalidSpecReason, "%s %q matches several objects: give its inventory path", what, name)
	}
	return callError(subject{action: fmt.Sprintf("look up %s %q", what, name)}, err)
}

// profileID finds a VM storage policy by name through the SPBM endpoint.
func profileID(ctx context.Context, sess *session.Session, name string) (string, error) {
	pc, err := pbm.NewClient(ctx, sess.Client)
	if err != nil {
		return "", fmt.Errorf("storage policy service: %w", sess.Check(err))
	}
	id, err := pc.ProfileIDByName(ctx, name)
	if err != nil {
		if strings.Contains(err.Error(), "no pbm profile found") {
			return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "storagePolicy %q not found in vCenter", name)
		}
		return "", fmt.Errorf("look up storagePolicy %q: %w", name, err)
	}
	return id, nil
}
