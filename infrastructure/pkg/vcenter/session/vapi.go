package session

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/vapi/rest"
)

// WithVAPI runs use on a client of vCenter's vAPI (REST) endpoint, which content libraries and
// tags need, logged in as the session's user for this one use: the SOAP session's cookie does
// not open the vAPI endpoint. service names the endpoint's service in a failed login.
func (sess *Session) WithVAPI(ctx context.Context, service string, use func(*rest.Client) error) error {
	rc := rest.NewClient(sess.Client)
	if err := rc.Login(ctx, sess.user); err != nil {
		return fmt.Errorf("%s service login: %w", service, err)
	}
	defer func() { _ = rc.Logout(context.WithoutCancel(ctx)) }()
	return use(rc)
}
