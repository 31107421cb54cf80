package vcenter

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// TestCloneDuplicateName: a clone into a folder that has a VM of the machine's name fails in
// vcsim with DuplicateName; the failed task's message says so in words, naming the VM, the
// template and the folder, and ends with the fault's name.
func TestCloneDuplicateName(t *testing.T) {
	ctx := context.Background()
	sess := vcsimSession(t, &Sessions{Gate: &logingate.Gate{}}, startVcsim(t))
	dc, err := sess.datacenter(ctx, "DC0")
	if err != nil {
		t.Fatal(err)
	}
	const taken = "DC0_H0_VM1" // vcsim's own VM, in the datacenter's VM folder
	spec := &infrav1.VCenterMachineSpec{Template: "DC0_H0_VM0", Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}}
	b := &backend{sess: sess, dc: dc, spec: spec, where: where{Datacenter: "DC0", Template: spec.Template, Pool: "/DC0/host/DC0_H0/Resources", Networks: "VM Network"},
		machine: k8stypes.NamespacedName{Namespace: "ns", Name: taken}}
	s := &hypervisor.Scope{
		Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
		InfraMachine: &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: taken,
			UID: "6c1f0b6e-0000-4000-8000-000000000001"}, Spec: *spec},
		ComputerName: "win-1", NICs: []guest.NIC{{DHCP4: true}}, UserData: []byte("#ps1"),
		Commit: func(infrav1.VMReference) error { return nil },
	}
	ref, err := b.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var task hypervisor.Task
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if task, err = b.Task(ctx, s, ref); err != nil || task.State != hypervisor.TaskRunning {
			break
		}
	}
	if err != nil || task.State != hypervisor.TaskFailed {
		t.Fatalf("task %s: %+v, %v; want failed", ref, task, err)
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
