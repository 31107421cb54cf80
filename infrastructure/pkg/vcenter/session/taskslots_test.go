package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// TestTaskSlotSweep: a slot held by a task whose end no reconcile saw (its object was deleted)
// is freed once vCenter says the task is gone; while no sweep is due a full server refuses.
func TestTaskSlotSweep(t *testing.T) {
	ctx := context.Background()
	sessions := &Sessions{Gate: &logingate.Gate{}, MaxTasks: 1}
	sess := vcsimSession(t, sessions, startVcsim(t))
	host := sess.Host()
	started := func(ref string) {
		t.Helper()
		if err := sess.takeSlot(ctx, host, 1); err != nil {
			t.Fatalf("no slot for %s: %v", ref, err)
		}
		sessions.slots.started(host, ref, time.Now())
	}
	started("task-lost-1") // never polled again; vCenter does not know it
	started("task-lost-2") // the first was swept
	var throttled *hypervisor.Throttled
	if err := sess.takeSlot(ctx, host, 1); !errors.As(err, &throttled) {
		t.Fatalf("a full server with no sweep due gave %v, want Throttled", err)
	}
	if n := sessions.inFlight(host); n != 1 {
		t.Fatalf("%d tasks in flight, want 1", n)
	}
	if running, waits := testutil.ToFloat64(tasksRunning.WithLabelValues(host)), testutil.ToFloat64(taskSlotWaits.WithLabelValues(host)); running != 1 || waits != 1 {
		t.Errorf("capwin_vcenter_tasks_running %v, capwin_vcenter_task_slot_waits_total %v; want 1 and 1", running, waits)
	}
}
