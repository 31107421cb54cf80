package machine

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// intent writes a create's intent into the machine's status before the backend acts (see
// hypervisor.Intent): each write reads the machine from the API server first (checkLive) and is
// persisted at once.
type intent struct {
	r       *Reconciler
	ctx     context.Context
	obj     hypervisor.Object
	persist func() error
	// committed is true once Commit was recorded: a failed create after it may have reached the
	// hypervisor.
	committed bool
}

var _ hypervisor.Intent = (*intent)(nil)

// Place records the VM's host.
func (in *intent) Place(where infrav1.VMReference) error {
	if err := in.r.checkLive(in.ctx, in.obj); err != nil {
		return err
	}
	in.obj.GetMachineStatus().VM.Host = where.Host
	if err := in.persist(); err != nil {
		return fmt.Errorf("record the VM's host: %w", err)
	}
	return nil
}

// Commit records the create intent: the task, the cloning state since now, and the VM's host.
func (in *intent) Commit(where infrav1.VMReference) error {
	if err := in.r.checkLive(in.ctx, in.obj); err != nil {
		return err
	}
	st := in.obj.GetMachineStatus()
	st.Task = intentCreate
	st.Provisioning = infrav1.Provisioning{State: infrav1.StateCloning, Since: metav1.NewTime(in.r.now()), Failures: st.Provisioning.Failures}
	st.VM.Host = where.Host
	if err := in.persist(); err != nil {
		return fmt.Errorf("record create intent: %w", err)
	}
	in.committed = true
	return nil
}
