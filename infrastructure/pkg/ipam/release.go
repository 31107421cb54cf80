package ipam

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// networkDevices is what the machine kinds offer to find their network devices.
type networkDevices interface {
	GetNetworkDevices() []infrav1.NetworkDevice
}

// ReleaseClaims removes ClaimFinalizer from and deletes every claim of owner: those named after
// its current spec.network (ClaimName; found when owner offers GetNetworkDevices) and those in its
// namespace with an owner reference to it (so claims left by an older spec are released too). A
// claim belongs to owner when an owner reference has owner's UID, or owner's group, kind and
// name (a claim of an earlier object of the same name); claims of other objects are left alone.
// Idempotent: claims already gone count as released.
func ReleaseClaims(ctx context.Context, c client.Client, owner client.Object) error {
	if err := releaseClaims(ctx, c, owner); err != nil {
		return fmt.Errorf("release the IP address claims of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	return nil
}

func releaseClaims(ctx context.Context, c client.Client, owner client.Object) error {
	gvk, err := apiutil.GVKForObject(owner, c.Scheme())
	if err != nil {
		return fmt.Errorf("kind of the owner: %w", err)
	}
	claims := map[string]*ipamv1.IPAddressClaim{}
	if s, ok := owner.(networkDevices); ok {
		for d, dev := range s.GetNetworkDevices() {
			for p := range dev.AddressesFromPools {
				key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: ClaimName(owner.GetName(), d, p)}
				claim := &ipamv1.IPAddressClaim{}
				if err := c.Get(ctx, key, claim); apierrors.IsNotFound(err) {
					continue
				} else if err != nil {
					return fmt.Errorf("get IPAddressClaim %s: %w", key, err)
				}
				if belongsTo(claim, owner, gvk.GroupKind()) {
					claims[claim.Name] = claim
				}
			}
		}
	}
	// The cache's own objects: only the owner's claims are copied (release changes them).
	list := &ipamv1.IPAddressClaimList{}
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list IPAddressClaims in %s: %w", owner.GetNamespace(), err)
	}
	for i := range list.Items {
		claim := &list.Items[i]
		if _, seen := claims[claim.Name]; !seen && belongsTo(claim, owner, gvk.GroupKind()) {
			claims[claim.Name] = claim.DeepCopy()
		}
	}

	var errs []error
	for _, name := range slices.Sorted(maps.Keys(claims)) {
		if err := release(ctx, c, claims[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return kerrors.NewAggregate(errs)
}

func belongsTo(claim *ipamv1.IPAddressClaim, owner client.Object, gk schema.GroupKind) bool {
	for _, ref := range claim.OwnerReferences {
		if ref.UID == owner.GetUID() {
			return true
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == gk.Group && ref.Kind == gk.Kind && ref.Name == owner.GetName() {
			return true
		}
	}
	return false
}

// release removes the finalizer from a claim and deletes it.
func release(ctx context.Context, c client.Client, claim *ipamv1.IPAddressClaim) error {
	if controllerutil.ContainsFinalizer(claim, ClaimFinalizer) {
		base := claim.DeepCopy()
		controllerutil.RemoveFinalizer(claim, ClaimFinalizer)
		// The optimistic lock keeps finalizers others (the IPAM provider) add meanwhile.
		err := c.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("remove finalizer of IPAddressClaim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
	}
	if !claim.DeletionTimestamp.IsZero() {
		return nil
	}
	uid := claim.UID
	if err := c.Delete(ctx, claim, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete IPAddressClaim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	return nil
}
