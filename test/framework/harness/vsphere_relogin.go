package harness

import (
	"context"
	"net/url"
	"reflect"
	"sync"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// relogin logs the harness's own vSphere session in again when vCenter no longer knows it (a
// restart of its service) and makes the refused call once more, as VMware Tools and a watcher
// that must outlive vCenter restarts would.
type relogin struct {
	next soap.RoundTripper
	c    *vim25.Client
	user *url.Userinfo
	mu   sync.Mutex
}

func withRelogin(c *vim25.Client, user *url.Userinfo) {
	c.RoundTripper = &relogin{next: c.RoundTripper, c: c, user: user}
}

func (r *relogin) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	err := r.next.RoundTrip(ctx, req, res)
	if _, login := req.(*methods.LoginBody); login || !fault.Is(err, &types.NotAuthenticated{}) {
		return err
	}
	r.mu.Lock()
	lerr := session.NewManager(r.c).Login(ctx, r.user)
	r.mu.Unlock()
	if lerr != nil {
		return err
	}
	// The refused answer's fault stays in res unless cleared: decoding does not reset it.
	v := reflect.ValueOf(res).Elem()
	v.Set(reflect.Zero(v.Type()))
	return r.next.RoundTrip(ctx, req, res)
}
