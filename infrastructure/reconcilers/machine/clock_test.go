package machine

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// TestStepClockObservesEachStepOnce plays the reports of a bootstrap with a reboot in the
// features step, repeated as every poll repeats the last report.
func TestStepClockObservesEachStepOnce(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reports := []struct {
		at          time.Duration
		step, state string
	}{
		{0, "preflight", "Running"},
		{1 * time.Second, "preflight", "Running"}, // the same report, polled again
		{10 * time.Second, "features", "Running"},
		{40 * time.Second, "features", "Rebooting"},
		{90 * time.Second, "preflight", "Running"}, // the script starts over after the reboot
		{95 * time.Second, "features", "Running"},
		{100 * time.Second, "containerd", "Running"},
		{110 * time.Second, "reboot-helper", "Running"}, // not a step of the script
		{130 * time.Second, "finish", "Running"},
		{131 * time.Second, "finish", "Succeeded"},
		{140 * time.Second, "finish", "Succeeded"},
	}
	c := &stepClock{created: t0.Add(-time.Minute)} // this manager sent the create
	var got []stepTime
	for _, r := range reports {
		if st, ok := c.advance(r.step, r.state, t0.Add(r.at)); ok {
			got = append(got, st)
		}
	}
	g.Expect(got).To(Equal([]stepTime{
		{"preflight", 10 * time.Second},
		{"features", 90 * time.Second}, // the reboot included
		{"containerd", 30 * time.Second},
		{"finish", time.Second},
	}))
}

// TestStepClockAfterARestartSkipsTheStepInProgress: a manager that did not see the machine's
// create (it restarted) meets the guest mid-step; that step's start is unknown, so it is not
// timed, and the next ones are.
func TestStepClockAfterARestartSkipsTheStepInProgress(t *testing.T) {
	g := NewWithT(t)
	c, now := &stepClock{}, time.Now()
	_, ok := c.advance("downloads", "Running", now)
	g.Expect(ok).To(BeFalse())
	_, ok = c.advance("containerd", "Running", now.Add(20*time.Minute))
	g.Expect(ok).To(BeFalse(), "downloads began before this manager started: not timed")
	st, ok := c.advance("firewall", "Running", now.Add(21*time.Minute))
	g.Expect(ok).To(BeTrue())
	g.Expect(st).To(Equal(stepTime{"containerd", time.Minute}))
}

func TestStepClockFailedStepIsNotAStepTime(t *testing.T) {
	g := NewWithT(t)
	c, now := &stepClock{}, time.Now()
	_, ok := c.advance("join", "Running", now)
	g.Expect(ok).To(BeFalse())
	_, ok = c.advance("join", "Failed", now.Add(time.Minute))
	g.Expect(ok).To(BeFalse())
}

func TestNodeReadyIsObservedOnceAfterACreate(t *testing.T) {
	g := NewWithT(t)
	c, now := &stepClock{}, time.Now()
	_, ok := c.nodeReady(now)
	g.Expect(ok).To(BeFalse(), "no create seen by this manager: nothing to measure")
	c.created = now
	d, ok := c.nodeReady(now.Add(5 * time.Minute))
	g.Expect(ok).To(BeTrue())
	g.Expect(d).To(Equal(5 * time.Minute))
	_, ok = c.nodeReady(now.Add(6 * time.Minute))
	g.Expect(ok).To(BeFalse())
}

// TestNodeReadyWithinTheSecondOfTheCreate: the NodeReady condition's time has whole seconds, so a
// Node ready within the second of the create (a fast guest) reads as ready before it. That is
// observed as 0 s, not dropped: dropping it lost the machine's only observation (TestObservability
// in test/e2e waited for it in vain).
func TestNodeReadyWithinTheSecondOfTheCreate(t *testing.T) {
	g := NewWithT(t)
	created := time.Date(2026, 12, 2, 16, 11, 55, 400_000_000, time.UTC)
	c := &stepClock{created: created}
	d, ok := c.nodeReady(created.Truncate(time.Second))
	g.Expect(ok).To(BeTrue())
	g.Expect(d).To(Equal(time.Duration(0)))
	stale := &stepClock{created: created}
	_, ok = stale.nodeReady(created.Add(-time.Minute))
	g.Expect(ok).To(BeFalse(), "a condition from before the create is not this VM's")
}

func TestClocksAreKeptPerObjectAndForgotten(t *testing.T) {
	g := NewWithT(t)
	var cs clocks
	k := types.NamespacedName{Namespace: "ns", Name: "win-0"}
	cs.with(k, "uid-1", func(c *stepClock) { c.created = time.Now() })
	cs.with(k, "uid-1", func(c *stepClock) { g.Expect(c.created.IsZero()).To(BeFalse()) })
	cs.with(k, "uid-2", func(c *stepClock) {
		g.Expect(c.created.IsZero()).To(BeTrue(), "a new object of the same name starts over")
	})
	g.Expect(cs.len()).To(Equal(1))
	cs.forget(k)
	g.Expect(cs.len()).To(Equal(0))
}

func TestStateLabels(t *testing.T) {
	g := NewWithT(t)
	g.Expect(stateLabel("")).To(Equal("Pending"))
	g.Expect(stateLabel("Provisioned")).To(Equal("Provisioned"))
	g.Expect(bootstrapLabel("")).To(Equal("None"))
	g.Expect(bootstrapLabel("Failed")).To(Equal("Failed"))
}
