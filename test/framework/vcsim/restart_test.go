package vcsim

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// TestRestart: while the endpoint is down nothing connects; afterwards it listens on the same
// address with the same VMs, a session from before is not logged in, and a task that ended
// before is unknown.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	defer model.Remove()
	model.Service.TLS = new(tls.Config)
	e := NewEndpoint(model, model.Service.NewServer())
	defer e.Close()
	u := e.first.URL

	c, err := vim25.NewClient(ctx, soap.NewClient(u, true))
	if err != nil {
		t.Fatal(err)
	}
	if err := session.NewManager(c).Login(ctx, u.User); err != nil {
		t.Fatal(err)
	}
	vms, err := find.NewFinder(c).VirtualMachineList(ctx, "/DC0/vm/*")
	if err != nil || len(vms) == 0 {
		t.Fatalf("VMs before the restart: %v, %v", vms, err)
	}
	task, err := vms[0].PowerOff(ctx)
	if err != nil || task.Wait(ctx) != nil {
		t.Fatalf("power off: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // a task is forgotten once it is a second old

	restarted := make(chan error, 1)
	go func() { restarted <- e.Restart(ctx, 500*time.Millisecond) }()
	time.Sleep(200 * time.Millisecond)
	if _, err := vim25.NewClient(ctx, soap.NewClient(u, true)); err == nil {
		t.Error("connected while the endpoint was down")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}

	if _, err := find.NewFinder(c).VirtualMachineList(ctx, "/DC0/vm/*"); !fault.Is(err, &types.NotAuthenticated{}) {
		t.Errorf("the session from before the restart: %v, want NotAuthenticated", err)
	}
	if err := session.NewManager(c).Login(ctx, u.User); err != nil {
		t.Fatal(err)
	}
	after, err := find.NewFinder(c).VirtualMachineList(ctx, "/DC0/vm/*")
	if err != nil || len(after) != len(vms) {
		t.Errorf("VMs after the restart: %d (%v), before %d", len(after), err, len(vms))
	}
	var info mo.Task
	err = property.DefaultCollector(c).RetrieveOne(ctx, task.Reference(), []string{"info"}, &info)
	if !fault.Is(err, &types.ManagedObjectNotFound{}) {
		t.Errorf("a task that ended before the restart: %v, want ManagedObjectNotFound", err)
	}
}
