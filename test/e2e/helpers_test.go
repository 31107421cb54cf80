// Package e2e_test runs the end-to-end scenarios on the local harness (test/framework/harness): CAPI's own
// controllers and capwin's providers on a real management apiserver, a real workload cluster,
// vcsim or simulated Hyper-V hosts, and simulated Windows guests that join for real.
package e2e_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/harness"
)

var stepTimeout = envDuration("CAPWIN_E2E_STEP_TIMEOUT", 4*time.Minute)

// controllersLog receives the controllers' logs (the global logger, shared by the tests that
// run in parallel) at the highest verbosity, for the secret scan at the end of each test.
var controllersLog string

func TestMain(m *testing.M) {
	os.Exit(runWithLog(m))
}

// runWithLog sends the controllers' logs, every verbosity, to a file (and to stderr with
// CAPWIN_TEST_DEBUG=1) and runs the tests.
func runWithLog(m *testing.M) int {
	dir, err := os.MkdirTemp("", "capwin-e2e-log-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	controllersLog = filepath.Join(dir, "controllers.log")
	var also io.Writer
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		also = os.Stderr
	}
	f, err := harness.LogControllers(controllersLog, also)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = f.Close() }()
	return m.Run()
}

// start runs a harness for one test. Set CAPWIN_TEST_DEBUG=1 to see the controllers' logs and
// CAPWIN_E2E_LOGS=<dir> to keep the workload cluster's component logs. At its end the test fails
// if any credential of the run is found in the controllers' logs, events, objects or metrics.
func start(t *testing.T, provider string, options ...func(*harness.Options)) *harness.Harness {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: two apiservers, scheduler, controller-manager, hypervisor simulator")
	}
	logDir := os.Getenv("CAPWIN_E2E_LOGS")
	if logDir != "" {
		logDir = filepath.Join(logDir, t.Name())
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := io.Discard // the harness's own messages (the simulated guests') stay out of the scanned log
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		out = os.Stderr
	}
	log := zap.New(zap.WriteTo(out))
	opts := harness.Options{Provider: provider, LogDir: logDir, Log: log,
		Heartbeat: 5 * time.Second, JoinTimeout: time.Minute,
		Infrastructure: infrasetup.Options{PollInterval: time.Second, TaskPollInterval: 200 * time.Millisecond}}
	for _, o := range options {
		o(&opts)
	}
	// Not t.Context(): it ends before the cleanups, and the secret scan needs the clusters.
	ctx, cancel := context.WithCancel(context.Background())
	h, err := harness.Start(ctx, opts)
	t.Cleanup(func() {
		defer cancel()
		if h == nil {
			return
		}
		if err == nil {
			keepLogsOfFailure(ctx, t, h, logDir)
			names, err := h.ScanSecrets(ctx, controllersLog)
			if err != nil {
				t.Error(err)
			} else {
				t.Logf("secret scan: none of %d credentials in the controllers' logs (V(%d)), events, objects or metrics", len(names), harness.LogVerbosity)
			}
		}
		if err := h.Stop(); err != nil {
			t.Log("stop:", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// progress logs a step with the time since the test began.
func progress(t *testing.T) harness.Progress {
	begin := time.Now()
	return func(format string, args ...any) {
		t.Helper()
		t.Logf("%6.1fs "+format, append([]any{time.Since(begin).Seconds()}, args...)...)
	}
}

// windowsNodes returns the workload cluster's Windows Nodes.
func windowsNodes(ctx context.Context, g Gomega, h *harness.Harness) []corev1.Node {
	nodes := &corev1.NodeList{}
	g.Expect(h.WorkloadClient.List(ctx, nodes, client.MatchingLabels{corev1.LabelOSStable: "windows"})).To(Succeed())
	return nodes.Items
}

// drains records, for every Machine seen being deleted, whether CAPI started draining its Node
// (status.deletion.nodeDrainStartTime) before the Machine disappeared.
type drains struct {
	mu      sync.Mutex
	drained map[string]bool
	stop    context.CancelFunc
	done    chan struct{}
}

func watchDrains(ctx context.Context, h *harness.Harness) *drains {
	ctx, cancel := context.WithCancel(ctx)
	d := &drains{drained: map[string]bool{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for ctx.Err() == nil {
			list := &clusterv1.MachineList{}
			if err := h.Management.Client.List(ctx, list, client.InNamespace(harness.Namespace)); err == nil {
				d.mu.Lock()
				for _, m := range list.Items {
					if !m.DeletionTimestamp.IsZero() && m.Status.NodeRef.IsDefined() {
						d.drained[m.Name] = d.drained[m.Name] || m.Status.Deletion != nil && !m.Status.Deletion.NodeDrainStartTime.IsZero()
					}
				}
				d.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return d
}

// result stops watching and returns machine name -> drained.
func (d *drains) result() map[string]bool {
	d.stop()
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.drained
}

// readyNodes counts the Ready Windows Nodes of a build.
func readyNodes(t *testing.T, h *harness.Harness, build string) int {
	s, err := h.Snapshot(t.Context())
	if err != nil {
		return -1
	}
	return s.NodesReady[build]
}

// machinesOf returns a MachineDeployment's Machines (nil on a read error).
func machinesOf(t *testing.T, h *harness.Harness, md string) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	if err := h.Management.Client.List(t.Context(), list, client.InNamespace(harness.Namespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md}); err != nil {
		return nil
	}
	return list.Items
}

// buildOf returns a Node's windows-build label.
func buildOf(t *testing.T, h *harness.Harness, node string) string {
	n := &corev1.Node{}
	if err := h.WorkloadClient.Get(t.Context(), client.ObjectKey{Name: node}, n); err != nil {
		return ""
	}
	return n.Labels[corev1.LabelWindowsBuild]
}

// nodeResources describes the Nodes of a MachineDeployment's Machines as their kubelets report
// them: "<capacity pods> pods, <allocatable memory>" (nil while a Machine has no Node).
func nodeResources(t *testing.T, h *harness.Harness, md string) []string {
	var out []string
	for _, m := range machinesOf(t, h, md) {
		n := &corev1.Node{}
		if err := h.WorkloadClient.Get(t.Context(), client.ObjectKey{Name: m.Status.NodeRef.Name}, n); err != nil {
			return nil
		}
		out = append(out, fmt.Sprintf("%s pods, %s", n.Status.Capacity.Pods(), n.Status.Allocatable.Memory()))
	}
	return out
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}
