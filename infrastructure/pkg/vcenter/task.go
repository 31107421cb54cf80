package vcenter

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// Task reads a task's state in one call; a task vCenter no longer knows is TaskUnknown. A task
// that ended frees its slot (--vcenter-max-tasks). A session
// vCenter ended meanwhile is replaced and the read made again: the task lives on in vCenter.
func (b *backend) Task(ctx context.Context, _ *hypervisor.Scope, ref string) (hypervisor.Task, error) {
	var content []types.ObjectContent
	task := types.ManagedObjectReference{Type: "Task", Value: ref}
	err := b.renewing(ctx, func() error {
		err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, task, []string{"info.state", "info.error", "info.result"}, &content)
		if err != nil {
			return err
		}
		return unreadable(content)
	})
	if err != nil {
		if fault.Is(err, &types.ManagedObjectNotFound{}) {
			b.sess.pool.slots.ended(b.sess.host(), ref)
			return hypervisor.Task{State: hypervisor.TaskUnknown}, nil
		}
		return hypervisor.Task{}, b.sess.check(err)
	}
	t := hypervisor.Task{State: hypervisor.TaskUnknown}
	defer func() {
		if t.State == hypervisor.TaskRunning {
			b.sess.watch.task(b.machine, task) // started before this manager (re)started
		} else {
			b.sess.pool.slots.ended(b.sess.host(), ref)
		}
	}()
	for _, oc := range content {
		for _, p := range oc.PropSet {
			switch v := p.Val.(type) {
			case types.TaskInfoState:
				t.State = taskState(v)
			case types.ManagedObjectReference:
				if v.Type == "VirtualMachine" {
					t.VM.ID = v.Value
				}
			case types.LocalizedMethodFault:
				t.Message = v.LocalizedMessage
				if t.Message == "" && v.Fault != nil {
					t.Message = strings.TrimPrefix(fmt.Sprintf("%T", v.Fault), "*types.")
				}
			}
		}
	}
	return t, nil
}

func taskState(s types.TaskInfoState) hypervisor.TaskState {
	switch s {
	case types.TaskInfoStateSuccess:
		return hypervisor.TaskSucceeded
	case types.TaskInfoStateError:
		return hypervisor.TaskFailed
	}
	return hypervisor.TaskRunning
}
