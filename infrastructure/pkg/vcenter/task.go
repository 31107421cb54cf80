package vcenter

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// Task reads a task's state in one call; a task vCenter no longer knows is TaskUnknown. A task
// that ended frees its slot (--vcenter-max-tasks). A session
// vCenter ended meanwhile is replaced and the read made again: the task lives on in vCenter. A
// failed task's message says in words what it did, what went wrong and what to do.
func (b *backend) Task(ctx context.Context, s *hypervisor.Scope, ref string) (hypervisor.Task, error) {
	var content []types.ObjectContent
	task := types.ManagedObjectReference{Type: "Task", Value: ref}
	err := b.renewing(ctx, func() error {
		err := property.DefaultCollector(b.sess.Client).RetrieveOne(ctx, task, []string{"info.state", "info.error", "info.result", "info.descriptionId"}, &content)
		if err != nil {
			return err
		}
		return session.Unreadable(content)
	})
	if err != nil {
		if fault.Is(err, &types.ManagedObjectNotFound{}) {
			b.sess.EndTask(ref)
			return hypervisor.Task{State: hypervisor.TaskUnknown}, nil
		}
		return hypervisor.Task{}, callError(b.onVM("read task "+ref+" of", s.InfraMachine.GetMachineStatus().VM.ID), b.sess.Check(err))
	}
	t := hypervisor.Task{State: hypervisor.TaskUnknown}
	defer func() {
		if t.State == hypervisor.TaskRunning {
			b.sess.FollowTask(b.machine, task) // started before this manager (re)started
		} else {
			b.sess.EndTask(ref)
		}
	}()
	var failure *types.LocalizedMethodFault
	description := ""
	for _, oc := range content {
		for _, p := range oc.PropSet {
			if p.Name == "info.descriptionId" {
				description, _ = p.Val.(string)
				continue
			}
			switch v := p.Val.(type) {
			case types.TaskInfoState:
				t.State = taskState(v)
			case types.ManagedObjectReference:
				if v.Type == "VirtualMachine" {
					t.VM.ID = v.Value
				}
			case types.LocalizedMethodFault:
				failure = &v
			}
		}
	}
	if failure != nil {
		t.Message = taskMessage(b.taskSubject(s, ref, description), *failure)
	}
	return t, nil
}

// taskSubject names what a task of this machine does, by its description id (vCenter's
// VirtualMachine.clone, vcsim's VirtualMachine.cloneVm ...).
func (b *backend) taskSubject(s *hypervisor.Scope, ref, description string) subject {
	id := s.InfraMachine.GetMachineStatus().VM.ID
	switch d := strings.ToLower(description); {
	case strings.Contains(d, "clone"):
		return b.onClone()
	case strings.Contains(d, "reconfig"):
		return b.onVM("reconfigure", id)
	case strings.Contains(d, "poweron"):
		return b.onVM("power on", id)
	case strings.Contains(d, "poweroff"):
		return b.onVM("power off", id)
	case strings.Contains(d, "destroy"):
		return b.onVM("delete", id)
	}
	return b.onVM(fmt.Sprintf("run task %s (%s) on", ref, cmp.Or(description, "unknown")), id)
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
