package ipam

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// ClaimFinalizer keeps an IPAddressClaim (and so its address) while the VM may still use the
// address. ReleaseClaims removes it.
const ClaimFinalizer = "infrastructure.cluster.x-k8s.io/ip-claim-protection"

// maxReasonLen bounds a claim's failure message quoted in a waiting text.
const maxReasonLen = 256

// Address is one address a pool gave a device.
type Address struct {
	// CIDR is the address with the pool's prefix length, e.g. 10.0.0.5/24 or fd00::5/64.
	CIDR string
	// Gateway of the address's network; empty when the pool names none.
	Gateway string
}

// ClaimName is the name of the IPAddressClaim of an owner's device (index in spec.network) and
// pool (index in the device's addressesFromPools).
func ClaimName(owner string, device, pool int) string {
	return fmt.Sprintf("%s-%d-%d", owner, device, pool)
}

// EnsureClaims creates (idempotently) one IPAddressClaim per (device index, pool index),
// named "<owner name>-<device index>-<pool index>" (ClaimName), in the owner's namespace, with a
// controller owner reference to owner, the label cluster.x-k8s.io/cluster-name=clusterName,
// spec.clusterName, spec.poolRef from the TypedLocalObjectReference (apiGroup required), and
// ClaimFinalizer so a claim cannot vanish while the VM uses its address.
//
// It returns the addresses per device index (devices without pools get nil) once every claim is
// bound to an IPAddress (claim.status.addressRef -> IPAddress spec.address + spec.prefix +
// spec.gateway), or ready=false and the names of the claims still waiting; a waiting name is
// followed by the claim's failure (its Ready condition's reason and message) or the missing
// IPAddress in parentheses, e.g. "m-0-0 (PoolExhausted: no free address)".
//
// A claim of that name controlled by another object is not adopted: EnsureClaims returns an error
// naming it (and still handles the other claims). owner must have been read from the API server
// (it needs its UID), and c's scheme must know ipamv1 and owner's type.
func EnsureClaims(ctx context.Context, c client.Client, owner client.Object, clusterName string, devices []infrav1.NetworkDevice) (addrs [][]Address, ready bool, waiting []string, err error) {
	if owner.GetUID() == "" {
		return nil, false, nil, fmt.Errorf("claim IP addresses of %s/%s: the owner has no UID", owner.GetNamespace(), owner.GetName())
	}
	if clusterName == "" {
		return nil, false, nil, fmt.Errorf("claim IP addresses of %s/%s: no cluster name", owner.GetNamespace(), owner.GetName())
	}
	addrs = make([][]Address, len(devices))
	var errs []error
	for d, dev := range devices {
		for p, ref := range dev.AddressesFromPools {
			addr, wait, err := ensureClaim(ctx, c, owner, clusterName, ClaimName(owner.GetName(), d, p), ref)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("network device %d, pool %d: %w", d, p, err))
			case wait != "":
				waiting = append(waiting, wait)
			default:
				addrs[d] = append(addrs[d], addr)
			}
		}
	}
	if err := kerrors.NewAggregate(errs); err != nil {
		return nil, false, waiting, fmt.Errorf("claim IP addresses of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	if len(waiting) > 0 {
		return nil, false, waiting, nil
	}
	return addrs, true, nil, nil
}

// ensureClaim creates or checks one claim. It returns the bound address, or a waiting text.
func ensureClaim(ctx context.Context, c client.Client, owner client.Object, clusterName, name string, ref corev1.TypedLocalObjectReference) (Address, string, error) {
	poolRef, err := poolReference(ref)
	if err != nil {
		return Address{}, "", err
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Address{}, "", fmt.Errorf("IPAddressClaim name %q: %s", name, strings.Join(errs, "; "))
	}
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}
	claim := &ipamv1.IPAddressClaim{}
	if err := c.Get(ctx, key, claim); apierrors.IsNotFound(err) {
		return Address{}, name, createClaim(ctx, c, owner, clusterName, key, poolRef)
	} else if err != nil {
		return Address{}, "", fmt.Errorf("get IPAddressClaim %s: %w", key, err)
	}

	if err := checkOwner(claim, owner); err != nil {
		return Address{}, "", err
	}
	if !claim.DeletionTimestamp.IsZero() {
		return Address{}, name + " (being deleted)", nil
	}
	if claim.Spec.PoolRef != poolRef {
		return Address{}, "", fmt.Errorf("IPAddressClaim %s claims from %s, but the device asks %s: delete the claim to claim from the new pool",
			key, describePool(claim.Spec.PoolRef), describePool(poolRef))
	}
	if err := repairClaim(ctx, c, owner, clusterName, claim); err != nil {
		return Address{}, "", err
	}
	return boundAddress(ctx, c, claim)
}

// poolReference converts a device's pool reference; the API group is required.
func poolReference(ref corev1.TypedLocalObjectReference) (ipamv1.IPPoolReference, error) {
	if ref.APIGroup == nil || *ref.APIGroup == "" {
		return ipamv1.IPPoolReference{}, fmt.Errorf("pool %s %q has no apiGroup", ref.Kind, ref.Name)
	}
	if ref.Kind == "" || ref.Name == "" {
		return ipamv1.IPPoolReference{}, fmt.Errorf("pool reference needs kind and name (kind %q, name %q)", ref.Kind, ref.Name)
	}
	return ipamv1.IPPoolReference{APIGroup: *ref.APIGroup, Kind: ref.Kind, Name: ref.Name}, nil
}

func describePool(p ipamv1.IPPoolReference) string {
	return fmt.Sprintf("%s.%s %s", p.Kind, p.APIGroup, p.Name)
}

func createClaim(ctx context.Context, c client.Client, owner client.Object, clusterName string, key client.ObjectKey, poolRef ipamv1.IPPoolReference) error {
	claim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:  key.Namespace,
			Name:       key.Name,
			Labels:     claimLabels(owner, clusterName, nil),
			Finalizers: []string{ClaimFinalizer},
		},
		Spec: ipamv1.IPAddressClaimSpec{ClusterName: clusterName, PoolRef: poolRef},
	}
	if err := controllerutil.SetControllerReference(owner, claim, c.Scheme()); err != nil {
		return fmt.Errorf("IPAddressClaim %s: %w", key, err)
	}
	if err := c.Create(ctx, claim); err != nil {
		// AlreadyExists: the cache has not seen a claim yet; the retry checks whose it is.
		return fmt.Errorf("create IPAddressClaim %s: %w", key, err)
	}
	return nil
}

// checkOwner accepts a claim owned by owner (by UID). A claim controlled by another object, or
// not owned by owner at all, is an error: it is not adopted.
func checkOwner(claim *ipamv1.IPAddressClaim, owner client.Object) error {
	ctrlRef := metav1.GetControllerOfNoCopy(claim)
	if ctrlRef != nil && ctrlRef.UID == owner.GetUID() {
		return nil
	}
	if ctrlRef != nil {
		return fmt.Errorf("IPAddressClaim %s/%s exists but is controlled by %s %s (uid %s), not by this machine: it is not adopted; delete it or free the name",
			claim.Namespace, claim.Name, ctrlRef.Kind, ctrlRef.Name, ctrlRef.UID)
	}
	// No controller: accept a claim that names owner as a (plain) owner, as an older writer may
	// have done; repairClaim makes owner its controller.
	if hasOwnerUID(claim, owner) {
		return nil
	}
	return fmt.Errorf("IPAddressClaim %s/%s exists but is not owned by this machine: it is not adopted; delete it or free the name",
		claim.Namespace, claim.Name)
}

func hasOwnerUID(obj metav1.Object, owner client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// claimLabels are a claim's labels (existing, may be nil) with the cluster name and the owner's
// cluster.x-k8s.io/watch-filter label: a manager with a watch filter sees only claims that carry
// it, and is woken by no other event when the IPAM provider binds the address.
func claimLabels(owner client.Object, clusterName string, existing map[string]string) map[string]string {
	labels := maps.Clone(existing)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterv1.ClusterNameLabel] = clusterName
	if v, ok := owner.GetLabels()[clusterv1.WatchLabel]; ok {
		labels[clusterv1.WatchLabel] = v
	}
	return labels
}

// repairClaim adds what an owned claim misses (finalizer, cluster and watch-filter labels,
// controller reference).
func repairClaim(ctx context.Context, c client.Client, owner client.Object, clusterName string, claim *ipamv1.IPAddressClaim) error {
	base := claim.DeepCopy()
	changed := controllerutil.AddFinalizer(claim, ClaimFinalizer)
	if labels := claimLabels(owner, clusterName, claim.Labels); !maps.Equal(labels, claim.Labels) {
		claim.Labels, changed = labels, true
	}
	if metav1.GetControllerOfNoCopy(claim) == nil {
		if err := controllerutil.SetControllerReference(owner, claim, c.Scheme()); err != nil {
			return fmt.Errorf("IPAddressClaim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		changed = true
	}
	if !changed {
		return nil
	}
	if err := c.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patch IPAddressClaim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	return nil
}
