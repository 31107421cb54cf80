package vcenter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// Provider builds the vCenter backend of one reconcile from the VCenterCluster's server and
// identity.
type Provider struct {
	Client   client.Client
	Sessions *session.Sessions
	// IdentityNamespace is the manager's namespace, where VCenterClusterIdentities' Secrets live.
	IdentityNamespace string
	// Secrets reads the login Secrets (credentials.NewCache); nil reads them through Client.
	Secrets client.Reader
}

// Credentials reads a VCenterCluster's login (keys username, password) from its identity Secret
// or VCenterClusterIdentity, once the cluster may use it: nothing is sent with a login the
// cluster may not use.
func (p *Provider) Credentials(ctx context.Context, vc *infrav1.VCenterCluster) (session.Credentials, error) {
	cred := session.Credentials{Server: vc.Spec.Server, Thumbprint: vc.Spec.Thumbprint, CABundle: vc.Spec.CABundle, Insecure: vc.Spec.Insecure}
	ref := vc.Spec.IdentityRef
	// A lent login goes to the identity's server with the identity's certificate check only.
	lent := func(obj client.Object) error {
		id := obj.(*infrav1.VCenterClusterIdentity)
		entry, err := lend.VCenterServer(id, &vc.Spec)
		if err != nil {
			return hypervisor.Errorf(infrav1.EndpointNotLentReason, "%v", err)
		}
		cred.Thumbprint, cred.CABundle, cred.Insecure = entry.Thumbprint, entry.CABundle, false
		cred.Lent, cred.Identity = &id.Spec.Allowed, id.Name
		return nil
	}
	secret, err := credentials.Reader{Client: p.Client, Secrets: p.Secrets, Namespace: p.IdentityNamespace}.Secret(ctx, vc, credentials.Ref{Kind: ref.Kind, Name: ref.Name}, lent)
	if err != nil {
		reason := infrav1.CredentialsNotFoundReason
		if e := (*hypervisor.Error)(nil); errors.As(err, &e) {
			reason = e.Reason
		}
		return cred, &session.LoginError{Reason: reason, Err: fmt.Errorf("read the login of VCenterCluster %s/%s: %w", vc.Namespace, vc.Name, err)}
	}
	cred.Username, cred.Password = string(secret.Data["username"]), string(secret.Data["password"])
	cred.Secret = logingate.Key{Namespace: secret.Namespace, Name: secret.Name, ResourceVersion: secret.ResourceVersion}
	if cred.Username == "" || cred.Password == "" {
		return cred, &session.LoginError{Reason: infrav1.CredentialsNotFoundReason,
			Err: fmt.Errorf("read the login of VCenterCluster %s/%s: Secret %s/%s needs the keys username and password", vc.Namespace, vc.Name, secret.Namespace, secret.Name)}
	}
	return cred, nil
}

// session returns the cached vCenter session of a VCenterCluster's server and identity.
func (p *Provider) session(ctx context.Context, vc *infrav1.VCenterCluster) (*session.Session, error) {
	sess, _, err := p.sessionLent(ctx, vc)
	return sess, err
}

// sessionLent is session, with what the cluster's identity lends (nil: its own Secret).
func (p *Provider) sessionLent(ctx context.Context, vc *infrav1.VCenterCluster) (*session.Session, *lent, error) {
	cred, err := p.Credentials(ctx, vc)
	if err != nil {
		return nil, nil, err
	}
	sess, err := p.Sessions.Get(ctx, vc.Namespace+"/"+vc.Name, cred, vmWatch)
	if err != nil || cred.Lent == nil {
		return sess, nil, err
	}
	return sess, &lent{identity: cred.Identity, allowed: cred.Lent}, nil
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
	sess, lent, err := p.sessionLent(ctx, vc)
	if err != nil {
		return nil, err
	}
	w := placementFor(vc, vm, s.Machine.Spec.FailureDomain)
	dc, err := datacenter(ctx, sess, w.Datacenter)
	if err != nil {
		return nil, err
	}
	relogin := func(ctx context.Context) (*session.Session, error) { return p.session(ctx, vc) }
	return &backend{sess: sess, dc: dc, where: w, spec: &vm.Spec, relogin: relogin, fd: vc.Spec.FailureDomain(s.Machine.Spec.FailureDomain), lent: lent,
		machine: k8stypes.NamespacedName{Namespace: vm.Namespace, Name: vm.Name}}, nil
}

// placementFor merges the machine's placement and networks with its failure domain's (the domain
// wins).
func placementFor(vc *infrav1.VCenterCluster, vm *infrav1.VCenterMachine, failureDomain string) where {
	p := vm.Spec.Placement
	fd := vc.Spec.FailureDomain(failureDomain)
	if fd != nil {
		p = overlay(p, fd.Placement)
	}
	if p.Datacenter == "" {
		p.Datacenter = vc.Spec.Datacenter
	}
	nets := domainNetworks(&vm.Spec, fd)
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
