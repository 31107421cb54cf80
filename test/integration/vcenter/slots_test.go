package vcenter_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// TestTaskSlots: with --vcenter-max-tasks=2, six machines reconciled by four workers at once
// never have more than two of the manager's tasks running in vCenter (counted by vCenter, at
// each task start); machines that find no free slot wait with WaitingForTaskSlot, and every
// machine is cloned, configured and powered on.
func TestTaskSlots(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	const limit, machines, workers = 2, 6, 4
	starts := &taskStarts{limit: limit, vc: vc(g)}
	r := manualReconcilerWith(g, "slots", &session.Sessions{MaxTasks: limit, WrapTransport: starts.wrap})
	var fixtures []*fixture
	for i := range machines {
		f := newCluster(t, "slots")
		f.addMachine(t, fmt.Sprintf("win-md-0-slots-%d-%s", i, randSuffix()), userData, defaultSpec())
		fixtures = append(fixtures, f)
	}
	var throttled atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			gw := NewWithT(t)
			for i := w; i < machines; i += workers {
				f := fixtures[i]
				gw.Eventually(func(g Gomega) bool {
					_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.vm)})
					g.Expect(err).NotTo(HaveOccurred())
					m := f.get(g)
					if condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Reason == infrav1.WaitingForTaskSlotReason {
						throttled.Add(1)
					}
					return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
				}, time.Minute, 20*time.Millisecond).Should(BeTrue(), "machine %s", f.vm.Name)
			}
		})
	}
	wg.Wait()
	g.Expect(starts.err()).NotTo(HaveOccurred())
	g.Expect(starts.count()).To(BeNumerically(">=", 3*machines), "clone, reconfigure and power-on of each machine")
	g.Expect(throttled.Load()).To(BeNumerically(">", 0), "some machine waited for a slot")
}

// taskStarts checks, at each task start, how many of the earlier started tasks vCenter still
// runs. Starts are serialised, so the count is exact.
type taskStarts struct {
	limit int
	vc    *vim25.Client

	mu       sync.Mutex
	tasks    []types.ManagedObjectReference
	violated error
}

func (s *taskStarts) wrap(next soap.RoundTripper) soap.RoundTripper {
	return roundTripFunc(func(ctx context.Context, req, res soap.HasFault) error {
		if !strings.HasSuffix(reflect.TypeOf(req).Elem().Name(), "_TaskBody") {
			return next.RoundTrip(ctx, req, res)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		running, err := s.running(ctx)
		if err == nil && running >= s.limit {
			err = fmt.Errorf("%s started while %d tasks run (limit %d)", reflect.TypeOf(req).Elem().Name(), running, s.limit)
		}
		if err != nil && s.violated == nil {
			s.violated = err
		}
		if err := next.RoundTrip(ctx, req, res); err != nil {
			return err
		}
		if r := reflect.ValueOf(res).Elem().FieldByName("Res"); r.IsValid() && !r.IsNil() {
			s.tasks = append(s.tasks, r.Elem().FieldByName("Returnval").Interface().(types.ManagedObjectReference))
		}
		return nil
	})
}

func (s *taskStarts) running(ctx context.Context) (int, error) {
	if len(s.tasks) == 0 {
		return 0, nil
	}
	var tasks []mo.Task
	if err := property.DefaultCollector(s.vc).Retrieve(ctx, s.tasks, []string{"info.state"}, &tasks); err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		if t.Info.State == types.TaskInfoStateQueued || t.Info.State == types.TaskInfoStateRunning {
			n++
		}
	}
	return n, nil
}

func (s *taskStarts) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.violated
}

func (s *taskStarts) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}
