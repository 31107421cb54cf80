package vcenter

import (
	"context"
	"crypto/tls"
	"net/url"
	"testing"
	"time"

	_ "github.com/vmware/govmomi/pbm/simulator" // SPBM endpoint for storage policies
	"github.com/vmware/govmomi/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator" // vAPI endpoint for tags
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
)

// startVcsim serves vcsim's VPX model (any login accepted) until the test ends and returns its
// server URL.
func startVcsim(t *testing.T) string {
	t.Helper()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	model.Service.TLS = new(tls.Config)
	model.Service.RegisterEndpoints = true // SPBM (storage policies), vAPI (tags)
	model.Service.Listen = &url.URL{User: url.UserPassword("capwin", "pw")}
	model.Map().SessionManager().ValidLogin = func(*types.Login) bool { return true }
	srv := model.Service.NewServer()
	t.Cleanup(srv.Close)
	if err := templates.Mark(context.Background(), srv.URL, "/DC0/vm/DC0_H0_VM0"); err != nil {
		t.Fatal(err)
	}
	return srv.URL.Scheme + "://" + srv.URL.Host + srv.URL.Path
}

// vcsimSession logs in to a vcsim started by startVcsim.
func vcsimSession(t *testing.T, sessions *session.Sessions, server string) *session.Session {
	t.Helper()
	t.Cleanup(func() { sessions.Close(context.Background()) })
	sess, err := sessions.Get(context.Background(), "ns/c", session.Credentials{Server: server, Username: "capwin", Password: "pw", Insecure: true}, vmWatch)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// vcsimMachine is the backend and scope of one VCenterMachine cloned from spec.Template into
// vcsim's DC0 (host DC0_H0, "VM Network"), as one reconcile sees them.
func vcsimMachine(t *testing.T, sess *session.Session, name, uid string, spec *infrav1.VCenterMachineSpec) (*backend, *hypervisor.Scope) {
	t.Helper()
	dc, err := datacenter(context.Background(), sess, "DC0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{sess: sess, dc: dc, spec: spec, machine: k8stypes.NamespacedName{Namespace: "ns", Name: name},
		where: where{Datacenter: "DC0", Template: spec.Template, Pool: "/DC0/host/DC0_H0/Resources", Networks: "VM Network", StoragePolicy: spec.StoragePolicy}}
	s := &hypervisor.Scope{
		Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
		InfraMachine: &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID(uid)},
			Spec: *spec},
		ComputerName: "win-1", NICs: []guest.NIC{{DHCP4: true}}, UserData: []byte("#ps1"),
	}
	return b, s
}

// recorded is an intent that records nothing: these tests restart no manager.
type recorded struct{}

func (recorded) Place(infrav1.VMReference) error  { return nil }
func (recorded) Commit(infrav1.VMReference) error { return nil }

// waitTask polls a task until it ends (10 seconds at most).
func waitTask(t *testing.T, b *backend, s *hypervisor.Scope, ref string) hypervisor.Task {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		task, err := b.Task(context.Background(), s, ref)
		if err != nil {
			t.Fatalf("task %s: %v", ref, err)
		}
		if task.State != hypervisor.TaskRunning || time.Now().After(deadline) {
			return task
		}
	}
}
