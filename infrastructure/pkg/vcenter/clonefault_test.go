package vcenter

import (
	"context"
	"strings"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// TestCloneDuplicateName: a clone into a folder that has a VM of the machine's name fails in
// vcsim with DuplicateName; the failed task's message says so in words, naming the VM, the
// template and the folder, and ends with the fault's name.
func TestCloneDuplicateName(t *testing.T) {
	sess := vcsimSession(t, &session.Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	const taken = "DC0_H0_VM1" // vcsim's own VM, in the datacenter's VM folder
	spec := &infrav1.VCenterMachineSpec{Template: "DC0_H0_VM0", Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}}
	b, s := vcsimMachine(t, sess, taken, "6c1f0b6e-0000-4000-8000-000000000001", spec)
	ref, err := b.Create(context.Background(), s, recorded{})
	if err != nil {
		t.Fatal(err)
	}
	task := waitTask(t, b, s, ref)
	if task.State != hypervisor.TaskFailed {
		t.Fatalf("task %s: %+v; want failed", ref, task)
	}
	want := "clone VM DC0_H0_VM1 from template DC0_H0_VM0: a VM named DC0_H0_VM1, not created by capwin for this machine, " +
		"already exists in folder /DC0/vm: rename or remove it (vSphere fault DuplicateName)"
	if task.Message != want {
		t.Errorf("message\n%s\nwant\n%s", task.Message, want)
	}
	if strings.Contains(task.Message, "*types.") {
		t.Errorf("vcsim's Go type name in %q", task.Message)
	}
}
