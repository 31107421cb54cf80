// Package move tests `clusterctl move` of a capwin Cluster between two management clusters
// with the same vSphere (vcsim) and the same workload cluster behind them.
//
// The source management cluster is the harness's (test/framework/harness); the target is a second
// test/framework/harness/management cluster started in the same process, with CAPI's core reconcilers
// and both capwin providers. Both are prepared with clusterctl's own library code as
// `clusterctl init` leaves a cluster (inventory CRD, Provider objects, provider labels on the
// CRDs), and the move runs through clusterctl's client library (client.New + Move), exactly
// the code path of `clusterctl move --to-kubeconfig`.
//
// The test lives in move_test.go; there is no non-test code here.
package move
