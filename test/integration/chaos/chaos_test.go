package chaos

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/test/framework/harness"
)

// TestChaosShort is the soak in brief: a few machines per provider, 30 s of faults at raised
// rates with a rollout, a manager restart and a restart of the hypervisor's endpoint, then every
// invariant, and the secret scan over the controllers' logs at the highest verbosity. `make
// chaos` runs it long.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos soak: harness with two apiservers and a hypervisor simulator")
	}
	var also io.Writer
	out := io.Discard
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		out, also = os.Stderr, os.Stderr
	}
	log := zap.New(zap.WriteTo(out))
	controllersLog := filepath.Join(t.TempDir(), "controllers.log")
	f, err := harness.LogControllers(controllersLog, also)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rates := DefaultRates
	rates.Delay, rates.Drop, rates.Lose, rates.Expire, rates.Fail = 0.1, 0.03, 0.03, 0.02, 0.3
	// The providers' soaks run side by side, each on a harness of its own.
	var mu sync.Mutex
	var reports []*Report
	t.Run("soak", func(t *testing.T) {
		for _, p := range []string{harness.VCenter, harness.HyperV} {
			t.Run(p, func(t *testing.T) {
				t.Parallel()
				r, err := Run(t.Context(), Config{Provider: p, Machines: 3, Duration: 30 * time.Second, Seed: 1, Rates: rates,
					Restarts: 1, SimRestarts: 1, Converge: 6 * time.Minute, Log: log, ControllersLog: controllersLog}, func(format string, args ...any) { t.Logf(format, args...) })
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				mu.Lock()
				defer mu.Unlock()
				reports = append(reports, r)
			})
		}
	})
	if len(reports) != 2 {
		t.FailNow()
	}
	sort.Slice(reports, func(i, j int) bool { return reports[i].Provider > reports[j].Provider })
	t.Log("\n" + Markdown(reports))
	for _, r := range reports {
		for _, v := range r.Violations {
			t.Errorf("%s: %s", r.Provider, v)
		}
		if len(r.Faults) == 0 {
			t.Errorf("%s: no fault was injected", r.Provider)
		}
		if r.Faults["vCenter service restarts"]+r.Faults["Hyper-V WinRM service restarts"] != 1 {
			t.Errorf("%s: the hypervisor endpoint was not restarted once: %v", r.Provider, r.Faults)
		}
	}
}
