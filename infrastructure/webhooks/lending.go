package webhooks

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
)

// Admission asks the cluster identity a cluster borrows whether it lends its login for what the
// cluster names. An identity that cannot be read (not created yet) is left to the reconciler,
// which asks again before any login and sends nothing if not.

// lentVCenter refuses a VCenterCluster whose identity does not lend its login to the cluster's
// server with the cluster's certificate check, or does not lend the folders, pools, datastores
// and networks its failure domains name by whole inventory path.
func lentVCenter(ctx context.Context, r client.Reader, c *infrav1.VCenterCluster) field.ErrorList {
	if r == nil || c.Spec.IdentityRef.IsSecret() {
		return nil
	}
	id := &infrav1.VCenterClusterIdentity{}
	if err := r.Get(ctx, client.ObjectKey{Name: c.Spec.IdentityRef.Name}, id); err != nil {
		return nil
	}
	_, err := lend.VCenterServer(id, &c.Spec)
	errs := refusals(err)
	for i, fd := range c.Spec.FailureDomains {
		p := lend.VCenterPaths{Folder: fd.Placement.Folder, Pool: fd.Placement.ResourcePool, Datastore: fd.Placement.Datastore, Networks: fd.Networks}
		for _, r := range lend.VCenterNamed(id.Name, &id.Spec.Allowed, p) {
			if r.Field == "spec.network" {
				r.Field = "spec.networks"
			}
			errs = append(errs, refusalsAt(field.NewPath("spec", "failureDomains").Index(i), []*lend.Refusal{r})...)
		}
	}
	return errs
}

// lentHyperV refuses a HyperVCluster with a host that borrows the cluster's identity at an
// address, or in a way, the identity does not lend its login to, and one that borrows it with
// folders or switches the identity does not lend.
func lentHyperV(ctx context.Context, r client.Reader, c *infrav1.HyperVCluster) field.ErrorList {
	if r == nil || c.Spec.CredentialsRef.IsSecret() {
		return nil
	}
	id := &infrav1.HyperVClusterIdentity{}
	if err := r.Get(ctx, client.ObjectKey{Name: c.Spec.CredentialsRef.Name}, id); err != nil {
		return nil
	}
	var errs field.ErrorList
	borrowed := false
	for i, h := range c.Spec.Hosts {
		if h.CredentialsRef.Name != "" {
			continue // the host's own Secret
		}
		borrowed = true
		_, err := lend.HyperVHost(id, h, fmt.Sprintf("spec.hosts[%d]", i))
		errs = append(errs, refusals(err)...)
	}
	if borrowed {
		for _, r := range lend.HyperVCluster(id.Name, &id.Spec.Allowed, &c.Spec) {
			errs = append(errs, refusals(r)...)
		}
	}
	return errs
}

// refusals turns a lend.Refusal into a Forbidden field error.
func refusals(err error) field.ErrorList {
	var r *lend.Refusal
	if !errors.As(err, &r) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath(r.Field), r.Detail)}
}
