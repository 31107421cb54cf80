// Package owner holds the checks capwin's controllers make on the Cluster API Machine that owns
// their objects (a WindowsConfig, a VCenterMachine or HyperVMachine).
package owner

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// IsMachine reports whether an owner reference names a Cluster API Machine.
func IsMachine(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == clusterv1.GroupVersion.Group && ref.Kind == "Machine"
}

// MachineOwns reports whether the Machine named machine is among o's owners.
func MachineOwns(o client.Object, machine string) bool {
	return slices.ContainsFunc(o.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return IsMachine(ref) && ref.Name == machine })
}

// OwnedOrDeleting lets through the events of an object that a Machine owns or that is being
// deleted. Before CAPI's Machine controller sets the owner reference a reconcile has nothing to
// do, and each one (on the create, on the MachineSet's second apply a moment later) made CAPI's
// per-object rate limit hold back the reconcile that the owner reference starts by up to a second.
var OwnedOrDeleting = predicate.NewPredicateFuncs(func(o client.Object) bool {
	return !o.GetDeletionTimestamp().IsZero() || slices.ContainsFunc(o.GetOwnerReferences(), IsMachine)
})
