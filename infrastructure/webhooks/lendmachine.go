package webhooks

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/lend"
)

// Machines and machine templates are judged against what their cluster's identity lends when
// they carry the cluster-name label (Cluster API's MachineSets and ClusterClass set it) and the
// Cluster, its infrastructure cluster and the identity can be read. Anything else is left to the
// reconciler, which judges every machine before its create and makes nothing it does not lend.

// infraCluster reads into c the infrastructure cluster of the Cluster obj is labelled with, when
// that is of kind; false when any of them is not known.
func infraCluster(ctx context.Context, r client.Reader, obj client.Object, kind string, c client.Object) bool {
	name := obj.GetLabels()[clusterv1.ClusterNameLabel]
	if r == nil || name == "" {
		return false
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, cluster); err != nil {
		return false
	}
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != kind || ref.APIGroup != infrav1.GroupVersion.Group {
		return false
	}
	return r.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, c) == nil
}

// lentHyperVMachine refuses a Hyper-V machine spec (at path) that uses what the identity its
// cluster borrows does not lend.
func lentHyperVMachine(ctx context.Context, r client.Reader, obj client.Object, spec *infrav1.HyperVMachineSpec, path *field.Path) field.ErrorList {
	hc := &infrav1.HyperVCluster{}
	if !infraCluster(ctx, r, obj, "HyperVCluster", hc) || hc.Spec.CredentialsRef.IsSecret() ||
		!slices.ContainsFunc(hc.Spec.Hosts, func(h infrav1.HyperVHost) bool { return h.CredentialsRef.Name == "" }) {
		return nil
	}
	id := &infrav1.HyperVClusterIdentity{}
	if err := r.Get(ctx, client.ObjectKey{Name: hc.Spec.CredentialsRef.Name}, id); err != nil {
		return nil
	}
	return refusalsAt(path, lend.HyperVMachine(id.Name, &id.Spec.Allowed, spec))
}

// lentVCenterMachine refuses a vCenter machine spec (at path) that names what the identity its
// cluster borrows does not lend.
func lentVCenterMachine(ctx context.Context, r client.Reader, obj client.Object, spec *infrav1.VCenterMachineSpec, path *field.Path) field.ErrorList {
	vc := &infrav1.VCenterCluster{}
	if !infraCluster(ctx, r, obj, "VCenterCluster", vc) || vc.Spec.IdentityRef.IsSecret() {
		return nil
	}
	id := &infrav1.VCenterClusterIdentity{}
	if err := r.Get(ctx, client.ObjectKey{Name: vc.Spec.IdentityRef.Name}, id); err != nil {
		return nil
	}
	p := lend.VCenterPaths{Template: spec.Template, Library: spec.ContentLibrary, Folder: spec.Placement.Folder,
		Pool: spec.Placement.ResourcePool, Datastore: spec.Placement.Datastore, StoragePolicy: spec.StoragePolicy}
	for _, n := range spec.Network {
		p.Networks = append(p.Networks, n.NetworkName)
	}
	return refusalsAt(path, lend.VCenterNamed(id.Name, &id.Spec.Allowed, p))
}

// refusalsAt turns refusals, whose fields are named from "spec", into Forbidden errors of the
// spec at path.
func refusalsAt(path *field.Path, rs []*lend.Refusal) field.ErrorList {
	var errs field.ErrorList
	for _, r := range rs {
		errs = append(errs, field.Forbidden(field.NewPath(path.String()+strings.TrimPrefix(r.Field, "spec")), r.Detail))
	}
	return errs
}
