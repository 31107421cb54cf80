package vcsim

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// TestHostsAtClientAddress: a client that reaches vcsim by a name (as a pod reaches a Service)
// is sent to that name for guest file transfers, pinned to the thumbprint TrustHosts set, and not
// to the ESX hosts' 127.0.0.1.
func TestHostsAtClientAddress(t *testing.T) {
	ctx := context.Background()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	defer model.Remove()
	Install(model)
	HostsAtClientAddress(model)
	model.Service.TLS = new(tls.Config)
	srv := model.Service.NewServer()
	defer srv.Close()
	TrustHosts(model, soap.ThumbprintSHA256(srv.Certificate()))

	u := *srv.URL
	_, port, _ := net.SplitHostPort(u.Host)
	u.Host = net.JoinHostPort("localhost", port)
	c, err := vim25.NewClient(ctx, soap.NewClient(&u, true))
	if err != nil {
		t.Fatal(err)
	}
	if err := session.NewManager(c).Login(ctx, srv.URL.User); err != nil {
		t.Fatal(err)
	}
	vm, err := find.NewFinder(c).VirtualMachine(ctx, "/DC0/vm/DC0_H0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := guest.NewOperationsManager(c, vm.Reference()).FileManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	turl, err := ops.TransferURL(ctx, "https://*"+transferPath+"x")
	if err != nil {
		t.Fatal(err)
	}
	if turl.Host != u.Host {
		t.Errorf("transfer URL host %q, want the address the client reached vcsim at (%s)", turl.Host, u.Host)
	}
	if got := c.Thumbprint(turl.Host); got != soap.ThumbprintSHA256(srv.Certificate()) {
		t.Errorf("thumbprint for %s: %q", turl.Host, got)
	}
}
