package guest_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/harness/workload"
)

// fixture is the workload cluster all subtests share.
type fixture struct {
	c      *workload.Cluster
	cs     kubernetes.Interface
	caHash string
}

func TestGuest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a workload cluster (etcd, kube-apiserver, kube-scheduler, kube-controller-manager)")
	}
	logDir := os.Getenv("WORKLOAD_LOG_DIR")
	if logDir == "" {
		logDir = t.TempDir()
	}
	c, err := workload.Start(t.Context(), workload.Options{LogDir: logDir, Binaries: os.Getenv("KUBEBUILDER_ASSETS")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("workload cluster started in %v", c.StartTime.Round(time.Millisecond))
	hash, err := windowsconfig.CACertHash(c.CACert)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{c: c, cs: kubernetes.NewForConfigOrDie(c.Config), caHash: hash}

	t.Run("scenarios", func(t *testing.T) {
		t.Run("cloud-config ltsc2022 joins and runs pods", f.testJoin)
		t.Run("powershell ltsc2025 reboots for Hyper-V and joins", f.testPowerShellReboot)
		t.Run("wrong CA hash", f.testWrongCAHash)
		t.Run("unknown token", f.testUnknownToken)
		t.Run("expired token", f.testExpiredToken)
		t.Run("containerd step fails", f.testFailAt)
		t.Run("steps take their time", f.testStepTime)
		t.Run("ltsc2019 is refused", f.testOldBuild)
		t.Run("never joins", f.testNeverJoin)
		t.Run("process and Hyper-V isolation", f.testIsolation)
		t.Run("kubelet configuration patch in both formats", f.testKubeletConfiguration)
		t.Run("binaries.containerd replaces the running containerd", f.testContainerdUpgrade)
		t.Run("kubelet and containerd logs", f.testLogs)
	})
	t.Run("many idle guests", f.testManyGuests)
}

// boot starts a guest for n and stops it when the test ends.
func (f *fixture) boot(t *testing.T, n node, build uint16, faults guest.Faults, joinTimeout time.Duration, image ...func(*guest.Config)) (*guest.Guest, *recorder) {
	t.Helper()
	n.endpoint = f.c.Endpoint
	if n.caHash == "" {
		n.caHash = f.caHash
	}
	rec := &recorder{}
	cfg := guest.Config{
		UserData: render(t, n), Build: build, Address: nextAddress(), Channel: rec, Faults: faults,
		HeartbeatInterval: time.Second, JoinTimeout: joinTimeout, Log: testr.New(t), Nodes: f.c.Nodes,
	}
	for _, change := range image {
		change(&cfg)
	}
	g := guest.Boot(t.Context(), cfg)
	t.Cleanup(g.Stop)
	return g, rec
}

// addresses hands out guest IPs as DHCP would.
var addresses atomic.Int32

func nextAddress() string {
	n := addresses.Add(1)
	return fmt.Sprintf("10.1.%d.%d", n/250, n%250+1)
}

// failedJoin checks a guest whose join failed: the status ends Failed at join with kubeadm's
// exit code and the reason in the log tail, the token file is gone, and no Node exists.
func (f *fixture) failedJoin(t *testing.T, g *guest.Guest, rec *recorder, name, reason string) {
	t.Helper()
	waitDone(t, g, time.Minute)
	var stepErr *guest.StepError
	if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "join" || !strings.Contains(err.Error(), reason) {
		t.Fatalf("Err() = %v, want a join StepError mentioning %q", err, reason)
	}
	_, reports, errs := rec.snapshot()
	last := reports[len(reports)-1]
	if last.Step != "join" || last.State != guest.StateFailed || last.Message != "kubeadm join exited with code 1" || !strings.Contains(last.LogTail, reason) {
		t.Errorf("last report = %+v, want join Failed with %q in the log tail", last, reason)
	}
	if len(errs) > 0 {
		t.Errorf("malformed reports: %v", errs)
	}
	if _, ok := g.File(`C:\var\lib\capwin\kubeadm-join-config.yaml`); ok {
		t.Error("the join configuration (it holds the token) was left on disk")
	}
	if _, ok := g.File(userdata.SentinelPath); ok {
		t.Error("the sentinel was written although the join failed")
	}
	if _, err := f.cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Node %s: want NotFound, got %v", name, err)
	}
}

func (f *fixture) testWrongCAHash(t *testing.T) {
	t.Parallel()
	token := createToken(t, f.cs, time.Hour)
	other := "sha256:" + strings.Repeat("ab", 32)
	g, rec := f.boot(t, node{format: userdata.FormatCloudConfig, name: "win-badca", token: token, caHash: other, gzipped: true},
		osversion.LTSC2022, guest.Faults{}, 4*time.Second)
	f.failedJoin(t, g, rec, "win-badca", "does not match any of the pinned public keys")
}

func (f *fixture) testUnknownToken(t *testing.T) {
	t.Parallel()
	g, rec := f.boot(t, node{format: userdata.FormatCloudConfig, name: "win-notoken", token: "abcdef.0123456789abcdef"},
		osversion.LTSC2022, guest.Faults{}, 4*time.Second)
	f.failedJoin(t, g, rec, "win-notoken", `no JWS signature for token ID "abcdef"`)
}

// testExpiredToken: the controller-manager's token cleaner deletes an expired token, and the
// bootstrap signer then has nothing to sign cluster-info with.
func (f *fixture) testExpiredToken(t *testing.T) {
	t.Parallel()
	token := createToken(t, f.cs, -time.Minute)
	id := strings.SplitN(token, ".", 2)[0]
	eventually(t, "the token cleaner to delete the expired token", 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := f.cs.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
		return apierrors.IsNotFound(err), client(err)
	})
	g, rec := f.boot(t, node{format: userdata.FormatCloudConfig, name: "win-expired", token: token},
		osversion.LTSC2022, guest.Faults{}, 4*time.Second)
	f.failedJoin(t, g, rec, "win-expired", `no JWS signature for token ID "`+id+`"`)
}

func (f *fixture) testFailAt(t *testing.T) {
	t.Parallel()
	token := createToken(t, f.cs, time.Hour)
	g, rec := f.boot(t, node{format: userdata.FormatCloudConfig, name: "win-nocontainerd", token: token},
		osversion.LTSC2022, guest.Faults{FailAt: "containerd"}, time.Minute)
	waitDone(t, g, time.Minute)
	_, reports, _ := rec.snapshot()
	want := "preflight:Running network:Running proxy:Running time:Running domain:Running domainGroups:Running users:Running features:Running downloads:Running disks:Running containerd:Running containerd:Failed"
	if got := reportSteps(reports); got != want {
		t.Errorf("reports = %s\nwant %s", got, want)
	}
	var stepErr *guest.StepError
	if !errors.As(g.Err(), &stepErr) || stepErr.Step != "containerd" || g.NodeName() != "win-nocontainerd" {
		t.Errorf("Err() = %v, NodeName() = %q: want a containerd StepError and the name from the user data", g.Err(), g.NodeName())
	}
	if _, err := f.cs.CoreV1().Nodes().Get(t.Context(), "win-nocontainerd", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("want no Node, got %v", err)
	}
}

// testStepTime: with Config.StepTime each step takes that long before its work (a bootstrap
// as long as on Windows, for the benchmarks), and every report carries when it was written.
func (f *fixture) testStepTime(t *testing.T) {
	t.Parallel()
	const step = 300 * time.Millisecond
	n := node{format: userdata.FormatCloudConfig, name: "win-slow", token: createToken(t, f.cs, time.Hour), endpoint: f.c.Endpoint, caHash: f.caHash}
	rec := &recorder{}
	start := time.Now()
	g := guest.Boot(t.Context(), guest.Config{UserData: render(t, n), Address: nextAddress(), Channel: rec,
		Faults: guest.Faults{FailAt: "proxy"}, StepTime: step, Log: testr.New(t)})
	t.Cleanup(g.Stop)
	waitDone(t, g, time.Minute)
	reports := g.Reports()
	if got, want := reportSteps(reports), "preflight:Running network:Running proxy:Running proxy:Failed"; got != want {
		t.Fatalf("reports = %s, want %s", got, want)
	}
	if reports[0].At.Before(start) {
		t.Errorf("the first report's time %s is before the boot %s", reports[0].At, start)
	}
	for i := 1; i < len(reports); i++ {
		if gap := reports[i].At.Sub(reports[i-1].At); gap < step {
			t.Errorf("report %d (%s %s) came %s after the one before, want at least %s", i, reports[i].Step, reports[i].State, gap, step)
		}
	}
}

func (f *fixture) testNeverJoin(t *testing.T) {
	t.Parallel()
	token := createToken(t, f.cs, time.Hour)
	g, rec := f.boot(t, node{format: userdata.FormatCloudConfig, name: "win-broken", token: token},
		osversion.LTSC2022, guest.Faults{NeverJoin: true}, time.Minute)
	waitDone(t, g, 10*time.Second)
	if !errors.Is(g.Err(), guest.ErrNeverJoins) {
		t.Errorf("Err() = %v, want ErrNeverJoins", g.Err())
	}
	time.Sleep(2 * time.Second) // anything it would still do
	address, reports, _ := rec.snapshot()
	if address == "" || len(reports) != 0 {
		t.Errorf("address %q, %d reports: want an address and no reports", address, len(reports))
	}
	if _, err := f.cs.CoreV1().Nodes().Get(t.Context(), "win-broken", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("want no Node, got %v", err)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// testContainerdUpgrade: binaries.containerd replaces the containerd the image runs: the script
// stops the service before its files are replaced (Windows refuses to replace a running program)
// and the containerd step starts it; a guest that loses power between the stop and the copy runs
// the step again after the restart and joins.
func (f *fixture) testContainerdUpgrade(t *testing.T) {
	t.Parallel()
	for _, faults := range []guest.Faults{{}, {RestartDuring: "downloads"}} {
		name := "win-ctrd-" + strings.ToLower(cmp.Or(faults.RestartDuring, "none"))
		token := createToken(t, f.cs, 15*time.Minute)
		archive := &userdata.Download{URL: "https://github.com/containerd/containerd/releases/download/v2.1.4/containerd-2.1.4-windows-amd64.tar.gz", SHA256: strings.Repeat("a", 64)}
		g, _ := f.boot(t, node{format: userdata.FormatPowerShell, name: name, token: token, containerd: archive},
			osversion.LTSC2022, faults, time.Minute)
		waitDone(t, g, 90*time.Second)
		if err := g.Err(); err != nil {
			t.Fatalf("%+v: %v", faults, err)
		}
		if data, ok := g.File(`C:\Program Files\containerd\containerd.exe`); !ok || !strings.Contains(string(data), archive.URL) {
			t.Errorf("%+v: containerd.exe is %q, not the archive's", faults, data)
		}
	}
}
