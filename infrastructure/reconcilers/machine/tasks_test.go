package machine

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// TestTaskReads follows the reads of one delete task: the first at a fifth of the task poll
// interval and the second one interval after the task started, to the nanosecond although the
// state's start is kept in whole seconds; then the waits grow with the state's age, or rest on
// the watch. A create's task is read first after one interval.
func TestTaskReads(t *testing.T) {
	g := NewWithT(t)
	start := time.Date(2026, 11, 26, 12, 0, 0, 900_000_000, time.UTC)
	now := start
	r := &Reconciler{TaskPollInterval: time.Second, Now: func() time.Time { return now }}
	r.Default()
	deleted := metav1.NewTime(start)
	obj := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "uid-1", DeletionTimestamp: &deleted}}
	// The state began with the task; status keeps it in whole seconds.
	obj.Status.Provisioning = infrav1.Provisioning{State: infrav1.StateDeleting, Since: metav1.NewTime(start.Truncate(time.Second))}
	s := &hypervisor.Scope{InfraMachine: obj}

	g.Expect(r.afterTask(s, "task-1").RequeueAfter).To(Equal(200 * time.Millisecond))
	g.Expect(obj.Status.Task).To(Equal("task-1"))
	now = start.Add(200 * time.Millisecond)
	g.Expect(r.taskWait(s)).To(Equal(800*time.Millisecond), "the second read comes one interval after the start")

	now = start.Add(time.Second)
	g.Expect(r.taskWait(s)).To(Equal(time.Second), "then the wait grows with the state's age, from one interval")
	now = start.Add(30 * time.Second)
	g.Expect(r.taskWait(s)).To(BeNumerically("~", 6*time.Second, time.Second))
	s.Watched = true
	g.Expect(r.taskWait(s)).To(Equal(10*time.Second), "a watched task rests on the watch, with a slow safety net")

	// A task this manager did not start (a restart) has no start time: the age rule alone.
	s.Watched = false
	obj.Status.Task = "task-2"
	now = start.Add(200 * time.Millisecond)
	g.Expect(r.taskWait(s)).To(Equal(time.Second))

	// An object with the same name and a new UID starts from nothing.
	obj.UID, obj.Status.Task = "uid-2", "task-1"
	g.Expect(r.taskWait(s)).To(Equal(time.Second))

	obj.DeletionTimestamp = nil
	g.Expect(r.afterTask(s, "task-3").RequeueAfter).To(Equal(time.Second), "a create's task")
}
