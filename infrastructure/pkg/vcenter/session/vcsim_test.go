package session

import (
	"context"
	"crypto/tls"
	"net/url"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
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
	model.Service.Listen = &url.URL{User: url.UserPassword("capwin", "pw")}
	model.Map().SessionManager().ValidLogin = func(*types.Login) bool { return true }
	srv := model.Service.NewServer()
	t.Cleanup(srv.Close)
	return srv.URL.Scheme + "://" + srv.URL.Host + srv.URL.Path
}

// vcsimSession logs in to a vcsim started by startVcsim.
func vcsimSession(t *testing.T, sessions *Sessions, server string) *Session {
	t.Helper()
	t.Cleanup(func() { sessions.Close(context.Background()) })
	sess, err := sessions.Get(context.Background(), "ns/c", Credentials{Server: server, Username: "capwin", Password: "pw", Insecure: true}, VMWatch{})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}
