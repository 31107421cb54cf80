// Package ipam claims addresses for the network devices of an infrastructure machine from
// Cluster API IPAM pools (ipam.cluster.x-k8s.io IPAddressClaim / IPAddress, v1beta2).
//
// For every pool a device lists in addressesFromPools, EnsureClaims creates one IPAddressClaim
// named "<machine>-<device index>-<pool index>" that the machine controls, and reads the address
// an IPAM provider binds to it. The claims carry ClaimFinalizer, so they cannot disappear (and
// their addresses be handed out again) while the VM still uses them; ReleaseClaims removes the
// finalizer and deletes them once the VM is gone.
//
// The client passed to this package must have ipamv1 ("sigs.k8s.io/cluster-api/api/ipam/v1beta2")
// and the owner's types in its scheme. The manager's RBAC needs ipaddressclaims (get, list, watch,
// create, update, patch, delete) and ipaddresses (get, list, watch) in ipam.cluster.x-k8s.io.
// Because the claims' controller reference blocks owner deletion, it also needs update on the
// owner's finalizers subresource (e.g. vcentermachines/finalizers) where the API server enforces
// OwnerReferencesPermissionEnforcement.
//
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch
package ipam
