// Package localpods runs the Pods of a management cluster's Deployments as local processes, for a
// management cluster that has an API server and no nodes (envtest's): it stands in for the
// kubelet, the Service network and the Deployment controller, so that `clusterctl init` installs
// cert-manager and the Cluster API providers from their own manifests and they run for real.
//
//   - Each Deployment whose containers all run a known program (Programs: by the image's name,
//     whatever its registry and tag) gets one process per container, started with the
//     container's command, args and env ($(VAR) and the downward API's fields), a kubeconfig, its
//     Secret volumes written to a folder, and its ports moved to free local ones (a manager's
//     webhook, health and metrics flags). A changed pod template restarts it; a deleted
//     Deployment stops it. Once its readiness probe answers, the Deployment's status says it is
//     available, as the Deployment controller would.
//   - The API server dials Services (webhooks, conversion) through an HTTP CONNECT proxy on a
//     Unix socket (its egress selector's "cluster" network, EgressConfig): a ClusterIP and port
//     are mapped to the process whose pod template the Service selects, and the container port
//     to its local port. Nothing else is reachable that way.
//
// A GarbageCollector deletes, every two seconds, the objects whose owners are all gone, as
// kube-controller-manager's garbage collector does (envtest runs none): a deleted Cluster's Secrets
// and templates go with it.
//
// What it does not do: more than one replica, init containers, probes other than HTTP GET,
// volumes other than Secrets and emptyDirs, resource limits, or any isolation between the
// processes (they run as this user, on this machine's loopback).
package localpods
