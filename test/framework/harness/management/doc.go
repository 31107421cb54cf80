// Package management runs the management-cluster half of a local end-to-end harness: a real
// kube-apiserver (internal/test/envtest) with the CRDs of CAPI core, CABPK, KCP and capwin, and ONE
// controller-runtime manager that runs, as production runs them in three managers:
//
//   - CAPI's own core reconcilers (sigs.k8s.io/cluster-api/core/reconcilers: Cluster, Machine,
//     MachineSet, MachineDeployment, MachineHealthCheck), its default indexes and all of its
//     admission webhooks, wired as core/main.go wires them (RuntimeClient nil: the RuntimeSDK and
//     InPlaceUpdates gates are off by default; ClusterTopology is off, so no topology controllers);
//   - capwin's infrastructure and bootstrap providers through infrastructure/setup and
//     bootstrap/setup (webhooks and reconcilers exactly as their main.go registers them);
//   - a test-only control plane provider (TestControlPlane, see controlplane.go).
//
// Webhooks. The three providers' webhook manifests (CAPI's core/config/webhook from the module
// cache, capwin's bootstrap/config/webhook and infrastructure/config/webhook) all name their
// configurations "mutating-webhook-configuration" and "validating-webhook-configuration";
// kustomize's namePrefix (capi-, capwin-bootstrap-, capwin-infrastructure-) tells them apart in
// production. envtest installs by name and would keep only the last one, so Start writes copies
// with those prefixes into a temporary directory and installs that (webhookconfig.go). Admission
// therefore really runs: e.g. CAPI's MachineDeployment defaulting fills selector and labels.
// CAPI's conversion webhooks are registered but never called: the CRD bases carry no conversion
// stanza (kustomize patches add it in production), and the harness speaks v1beta2 only.
//
// ClusterCaches. setup.Reconcilers of both capwin providers start their own ClusterCache
// (internal/manager.ClusterCache), as their separate managers do in production, and CAPI's core
// gets its own (clustercache.SetupWithManager with core/setup's options). Three caches of one
// manager do not conflict in state (each keeps its own accessors and cluster sources), but
// clustercache.SetupWithManager always names its controller "clustercache", and
// controller-runtime rejects a second controller of the same name process-wide (it also rejects
// a second Start in one test binary for every controller). No option of capwin's setup sets
// controller.Options.SkipNameValidation, so the manager handed to every setup function reports
// SkipNameValidation=true in its controller defaults (see unvalidatedNames). Duplicate names only
// share metric series, which a test does not read.
//
// Cache and client. The manager is internal/test/envtest's StartManager, i.e. capwin's cache options:
// cluster-labelled Secrets are cached with their data. CAPI's own options would strip the data
// of every cached Secret but kubeconfigs, which breaks capwin's bootstrap provider (it reads
// <cluster>-ca through the cache), so the shared manager must use capwin's. CAPI also reads
// unstructured objects from the cache (client Unstructured: true); here they are read live,
// which is only more requests.
//
// Control plane. KCP cannot run here (no kubelet, no kubeadm). Without spec.controlPlaneRef,
// CAPI's Cluster controller (core/reconcilers/cluster, setControlPlaneInitializedCondition)
// sets ControlPlaneInitialized only once a control-plane Machine has status.nodeRef, never sets
// status.initialization.controlPlaneInitialized, and takes spec.controlPlaneEndpoint only from
// the infrastructure cluster (VCenterCluster.spec.controlPlaneEndpoint, meant for a VIP): the
// harness would have to fake a Machine's nodeRef or the Cluster's status. Instead the Cluster points at
// a TestControlPlane (CRD with the cluster.x-k8s.io/v1beta2 contract label) whose tiny
// reconciler reports status.initialization.controlPlaneInitialized once spec.controlPlaneEndpoint
// is set (the endpoint of a running test/framework/harness/workload apiserver). CAPI's own Cluster
// controller then adopts it, copies the endpoint and sets ControlPlaneInitialized through the
// control plane contract (reconcileControlPlane), like it does for KCP. It has no version, so
// the MachineSet preflight checks have nothing to compare and pass. It reports
// status.externalManagedControlPlane: true, as managed control planes (EKS, AKS) do: without
// control plane Machines CAPI's Machine controller would otherwise neither drain nor delete a
// worker's Node (isDeleteNodeAllowed).
package management
