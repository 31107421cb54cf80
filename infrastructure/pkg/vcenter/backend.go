package vcenter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// Provider builds the vCenter backend of one reconcile from the VCenterCluster's server and
// identity.
type Provider struct {
	Client   client.Client
	Sessions *Sessions
	// IdentityNamespace is the manager's namespace, where VCenterClusterIdentities' Secrets live.
	IdentityNamespace string
	// Secrets reads the login Secrets (credentials.NewCache); nil reads them through Client.
	Secrets client.Reader
}

// Credentials reads a VCenterCluster's login (keys username, password) from its identity Secret
// or VCenterClusterIdentity, once the cluster may use it: nothing is sent with a login the
// cluster may not use.
func (p *Provider) Credentials(ctx context.Context, vc *infrav1.VCenterCluster) (Credentials, error) {
	cred := Credentials{Server: vc.Spec.Server, Thumbprint: vc.Spec.Thumbprint, CABundle: vc.Spec.CABundle, Insecure: vc.Spec.Insecure}
	ref := vc.Spec.IdentityRef
	secret, err := credentials.Reader{Client: p.Client, Secrets: p.Secrets, Namespace: p.IdentityNamespace}.Secret(ctx, vc, credentials.Ref{Kind: ref.Kind, Name: ref.Name})
	if err != nil {
		reason := infrav1.CredentialsNotFoundReason
		if e := (*hypervisor.Error)(nil); errors.As(err, &e) {
			reason = e.Reason
		}
		return cred, &LoginError{Reason: reason, Err: fmt.Errorf("identity: %w", err)}
	}
	cred.Username, cred.Password = string(secret.Data["username"]), string(secret.Data["password"])
	cred.Secret = logingate.Key{Namespace: secret.Namespace, Name: secret.Name, ResourceVersion: secret.ResourceVersion}
	if cred.Username == "" || cred.Password == "" {
		return cred, &LoginError{Reason: infrav1.CredentialsNotFoundReason, Err: fmt.Errorf("identity Secret %s/%s needs the keys username and password", secret.Namespace, secret.Name)}
	}
	return cred, nil
}

// session returns the cached vCenter session of a VCenterCluster's server and identity.
func (p *Provider) session(ctx context.Context, vc *infrav1.VCenterCluster) (*Session, error) {
	cred, err := p.Credentials(ctx, vc)
	if err != nil {
		return nil, err
	}
	return p.Sessions.Get(ctx, vc.Namespace+"/"+vc.Name, cred)
}

// Release closes the vCenter session of a deleted VCenterCluster unless another cluster uses it.
func (p *Provider) Release(cluster client.ObjectKey) {
	p.Sessions.Release(cluster.Namespace + "/" + cluster.Name)
}

// Backend implements hypervisor.BackendFor.
func (p *Provider) Backend(ctx context.Context, s *hypervisor.Scope) (hypervisor.Backend, error) {
	vc, ok := s.InfraCluster.(*infrav1.VCenterCluster)
	if !ok {
		return nil, fmt.Errorf("cluster infrastructure is %T, not a VCenterCluster", s.InfraCluster)
	}
	vm, ok := s.InfraMachine.(*infrav1.VCenterMachine)
	if !ok {
		return nil, fmt.Errorf("machine is %T, not a VCenterMachine", s.InfraMachine)
	}
	sess, err := p.session(ctx, vc)
	if err != nil {
		return nil, err
	}
	w := placementFor(vc, vm, s.Machine.Spec.FailureDomain)
	dc, err := sess.datacenter(ctx, w.Datacenter)
	if err != nil {
		return nil, err
	}
	relogin := func(ctx context.Context) (*Session, error) { return p.session(ctx, vc) }
	return &backend{sess: sess, dc: dc, where: w, spec: &vm.Spec, relogin: relogin,
		machine: k8stypes.NamespacedName{Namespace: vm.Namespace, Name: vm.Name}}, nil
}

// placementFor merges the machine's placement with its failure domain's (the domain wins).
func placementFor(vc *infrav1.VCenterCluster, vm *infrav1.VCenterMachine, failureDomain string) where {
	p := vm.Spec.Placement
	for _, fd := range vc.Spec.FailureDomains {
		if fd.Name == failureDomain && failureDomain != "" {
			p = overlay(p, fd.Placement)
		}
	}
	if p.Datacenter == "" {
		p.Datacenter = vc.Spec.Datacenter
	}
	nets := make([]string, 0, len(vm.Spec.Network))
	for _, n := range vm.Spec.Network {
		nets = append(nets, n.NetworkName)
	}
	snapshot := ""
	if vm.Spec.CloneMode == infrav1.LinkedClone {
		snapshot = vm.Spec.Snapshot
	}
	return where{Datacenter: p.Datacenter, Template: vm.Spec.Template, Library: vm.Spec.ContentLibrary, Snapshot: snapshot, Folder: p.Folder,
		Pool: p.ResourcePool, Datastore: p.Datastore, StoragePolicy: vm.Spec.StoragePolicy, Networks: strings.Join(nets, "\x00")}
}

func overlay(base, top infrav1.Placement) infrav1.Placement {
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&base.Datacenter, top.Datacenter}, {&base.ResourcePool, top.ResourcePool},
		{&base.Datastore, top.Datastore}, {&base.Folder, top.Folder},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return base
}

// backend is one reconcile's view of vCenter for one VCenterMachine.
type backend struct {
	sess  *Session
	dc    *object.Datacenter
	where where
	spec  *infrav1.VCenterMachineSpec
	// devices of the VM as Find last read them.
	devices object.VirtualDeviceList
	// relogin returns a new session once vCenter ended this one.
	relogin func(ctx context.Context) (*Session, error)
	// machine is the VCenterMachine: the session's watch wakes it when its VM or tasks change.
	machine k8stypes.NamespacedName
}

// metadata renders the instance metadata; nil when a NIC needs its MAC and the VM is not known.
func metadata(s *hypervisor.Scope, macs []string) ([]byte, error) {
	nics := guest.WithMACs(s.NICs, macs)
	for _, n := range nics {
		if n.MAC == "" && n.NeedsMAC() {
			return nil, nil
		}
	}
	var withMAC []guest.NIC
	for _, n := range nics {
		if n.MAC != "" {
			withMAC = append(withMAC, n)
		}
	}
	return guest.BuildMetadata(string(s.InfraMachine.GetUID()), s.ComputerName, withMAC, s.Linux())
}

// Create clones the template with hardware, NICs, disk and guestinfo in one task.
func (b *backend) Create(ctx context.Context, s *hypervisor.Scope) (string, error) {
	place, err := b.sess.resolve(ctx, b.where)
	if err != nil {
		return "", err
	}
	md, err := metadata(s, nil)
	if err != nil {
		return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "metadata: %v", err)
	}
	obj := s.InfraMachine
	spec, err := cloneSpec(cloneInput{
		Spec: b.spec, UID: string(obj.GetUID()), Owner: ownerMark(obj), Place: place, UserData: s.UserData, Metadata: md,
		Note: fmt.Sprintf("capwin: %s/%s (cluster %s)", obj.GetNamespace(), obj.GetName(), s.Cluster.Name),
	})
	if err != nil {
		return "", err
	}
	if s.CreateMayRun {
		if err := b.noCloneRunning(ctx, s, place.Template); err != nil {
			return "", err
		}
	}
	tmpl := object.NewVirtualMachine(b.sess.Client, place.Template)
	var cloneErr error
	ref, err := b.startTask(ctx, func() error { return s.Commit(infrav1.VMReference{}) }, func() (*object.Task, error) {
		task, err := tmpl.Clone(ctx, place.Folder, obj.GetName(), spec)
		cloneErr = err
		return task, err
	})
	if cloneErr != nil {
		b.sess.forget()
		if maybeSent(cloneErr) {
			return "", &hypervisor.CreatePending{Err: fmt.Errorf("clone of %s: no answer from vCenter: %w", obj.GetName(), cloneErr)}
		}
		return "", b.sess.check(cloneErr)
	}
	return ref, err
}

// Deliver prepares the clone for its first boot in one reconfigure: metadata that needed the VM's
// MACs, and the disk grown to spec.diskGiB.
func (b *backend) Deliver(ctx context.Context, s *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	md, err := metadata(s, vm.MACs)
	if err != nil || md == nil {
		return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "metadata: the VM has fewer NICs than spec.network (%v)", err)
	}
	extra, err := guestinfo(md, nil)
	if err != nil {
		return "", err
	}
	spec := types.VirtualMachineConfigSpec{ExtraConfig: extra}
	grow, err := diskChange(b.spec, b.devices)
	if err != nil {
		return "", err
	}
	if grow != nil {
		spec.DeviceChange = []types.BaseVirtualDeviceConfigSpec{grow}
	}
	return b.task(ctx, func() (*object.Task, error) { return b.object(vm).Reconfigure(ctx, spec) })
}

// ClearUserData removes the user data (bootstrap token, CA hash) from the VM config.
func (b *backend) ClearUserData(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	return b.reconfigure(ctx, vm, []types.BaseOptionValue{
		&types.OptionValue{Key: keyUserData, Value: ""}, &types.OptionValue{Key: keyUserDataEncoding, Value: ""},
	})
}

func (b *backend) reconfigure(ctx context.Context, vm *hypervisor.VM, extra []types.BaseOptionValue) (string, error) {
	return b.task(ctx, func() (*object.Task, error) {
		return b.object(vm).Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: extra})
	})
}

// PowerOn starts the VM.
func (b *backend) PowerOn(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	return b.task(ctx, func() (*object.Task, error) { return b.object(vm).PowerOn(ctx) })
}

// PowerOff cuts the power (hard) or asks VMware Tools to shut the guest down.
func (b *backend) PowerOff(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM, hard bool) (string, error) {
	v := b.object(vm)
	if !hard {
		return "", b.sess.check(v.ShutdownGuest(ctx))
	}
	return b.task(ctx, func() (*object.Task, error) { return v.PowerOff(ctx) })
}

// Destroy deletes the VM and its disks.
func (b *backend) Destroy(ctx context.Context, _ *hypervisor.Scope, vm *hypervisor.VM) (string, error) {
	return b.task(ctx, func() (*object.Task, error) { return b.object(vm).Destroy(ctx) })
}

// task starts a task in a slot of the server (startTask) and returns its reference, or the
// call's error.
func (b *backend) task(ctx context.Context, start func() (*object.Task, error)) (string, error) {
	ref, err := b.startTask(ctx, nil, start)
	return ref, b.sess.check(err)
}

// The vCenter session's property collector reports VM and task changes.
var _ hypervisor.Watcher = (*backend)(nil)

// Watched reports whether the session's watch follows this machine's VM and tasks, so the
// lifecycle can poll them slowly.
func (b *backend) Watched() bool { return b.sess.watch.watching() }

// Settled stops following a provisioned machine's VM (see settled).
func (b *backend) Settled(*hypervisor.Scope) { b.sess.watch.forget(b.machine) }

// renewing makes a read, and makes it once more on a new session when vCenter ended this one
// (NotAuthenticated: a vCenter restart, an idle timeout, an administrator): the poll goes on
// instead of failing the reconcile. The new login passes the login gate like any other.
func (b *backend) renewing(ctx context.Context, read func() error) error {
	err := read()
	if !fault.Is(err, &types.NotAuthenticated{}) {
		return err
	}
	_ = b.sess.check(err)
	sess, err := b.relogin(ctx)
	if err != nil {
		return err
	}
	b.sess, b.dc = sess, object.NewDatacenter(sess.Client, b.dc.Reference())
	return read()
}

// object is the govmomi handle of an observed VM.
func (b *backend) object(vm *hypervisor.VM) *object.VirtualMachine {
	return object.NewVirtualMachine(b.sess.Client, vmRef(vm.Ref.ID))
}
