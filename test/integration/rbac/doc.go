// Package rbac holds a test that runs both capwin managers under the RBAC their release grants.
//
// Every other envtest suite runs the managers as the envtest admin (system:masters), so nothing
// there shows that the generated ClusterRoles, the leader-election Roles and their bindings are
// enough. TestRBAC starts a real kube-apiserver with authorization mode RBAC, installs the CRDs,
// webhook configurations and RBAC objects of the release components (internal/release, variables
// at their defaults, as clusterctl init would install them), and runs each manager with a rest
// config that impersonates the release's ServiceAccount. Requests the apiserver answers with 403
// are recorded at the transport and reported as verb/resource; the test fails on any. It also
// scrapes the managers' secured /metrics endpoints with ServiceAccount tokens (TokenRequest).
//
// The apiserver runs the admission plugins of a kubeadm (kind) API server plus
// OwnerReferencesPermissionEnforcement, which Cluster API's kind e2e framework and OpenShift enable:
// changing an object's ownerReferences needs delete on the object, and setting blockOwnerDeletion
// needs update on the owner's finalizers subresource.
//
// Cluster API's own components grant capwin's ServiceAccounts nothing (CAPI core's aggregated
// role is bound to CAPI's ServiceAccount only), so none of CAPI's RBAC is installed.
package rbac
