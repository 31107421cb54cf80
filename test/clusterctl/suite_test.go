// Package clusterctl_test drives capwin's release through the clusterctl library: a local
// repository built from the release files, clusterctl generate cluster for every flavor, and
// the result applied to a real management apiserver with CAPI's and capwin's CRDs and webhooks.
package clusterctl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/cluster-api/feature"

	"github.com/capwin/capwin/test/harness/management"
)

var (
	mgmt       *management.Management
	kubeconfig string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	// ClusterClass is behind CAPI's ClusterTopology gate (clusterctl init: CLUSTER_TOPOLOGY=true).
	if err := feature.MutableGates.Set(string(feature.ClusterTopology) + "=true"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	// The harness's controllers only reconcile objects with this watch-filter label, so the
	// rendered clusters stay as applied; its webhooks (CAPI's and capwin's) see every request.
	mgmt, err = management.Start(ctx, management.Options{WatchFilter: "clusterctl-test-none"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "management cluster:", err)
		return 1
	}
	defer func() { _ = mgmt.Stop() }()
	if err := mgmt.LabelContracts(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "CRD contract labels:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "capwin-clusterctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: a temporary directory
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := mgmt.Env.WriteAdminKubeconfig("clusterctl", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		return 1
	}
	return m.Run()
}
