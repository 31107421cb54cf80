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

	"github.com/capwin/capwin/test/framework/harness/management"
)

var (
	mgmt       *management.Management
	kubeconfig string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "capwin-clusterctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: a temporary directory
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if mgmt, err = management.StartForClients(ctx, "clusterctl-test-none", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = mgmt.Stop() }()
	return m.Run()
}
